-- Room on each page for a row's next version: an update that changes no indexed column (a take's lease,
-- an attempt's outcome in the delivery log) then stays on its page and adds no index entries (a HOT update).
-- Rows written from now on get the room; older ones as they are rewritten.
ALTER TABLE webhook_events SET (fillfactor = 80);
ALTER TABLE webhook_deliveries SET (fillfactor = 80);
