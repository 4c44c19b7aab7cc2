-- Events are of several types (the catalogue: src/integrations/event-types.ts). Every event recorded so
-- far is a publish. `payload` holds the event's report as it was then; each attempt's body is made from it
-- by the event's type, so a publish's body stays the report itself.
ALTER TABLE webhook_events ADD COLUMN type text NOT NULL DEFAULT 'report.published';

-- The event types an integration receives: an event of another type is never recorded for it. Today's
-- integrations keep receiving publishes only; a new integration starts with the same choice.
ALTER TABLE integrations
  ADD COLUMN event_types text[] NOT NULL DEFAULT '{report.published}',
  ADD CONSTRAINT integrations_event_types_some CHECK (cardinality(event_types) > 0);
