import type { EventType } from '../../api-types.js';

/**
 * The event types: one row each says what the code needs of a type (the webhook of openapi.yaml that
 * carries it, how its body is made from the event's report, how the console names it). A type is
 * recorded by the action it tells of (report-events.ts recordReportEvent, in that action's transaction),
 * and delivered, retried and listed as every other. Adding a type is its schema in openapi.yaml (a value
 * of EventType, its webhook), a row here and the call that records it; test/integrations/event-types.test.ts
 * holds the rows and the document together.
 */
export interface EventTypeRow {
  /** The webhook of openapi.yaml's `webhooks:` that carries the type. */
  webhook: string;
  /** What the console's choice of event types says of it. */
  label: string;
  /** The webhook's body, made from the event's report (its JSON text) when each attempt is sent. */
  body: (report: string) => string;
}

/** A body that names its type beside the report, so that the signature covers the type too. */
const typed =
  (type: EventType) =>
  (report: string): string =>
    `{"type":${JSON.stringify(type)},"report":${report}}`;

export const EVENT_TYPES: Readonly<Record<EventType, EventTypeRow>> = {
  'report.published': {
    webhook: 'reportPublished',
    label: 'Report published: an inspector published a report and confirmed the notification',
    // The report itself, as it was before there were other types: today's receivers read it so.
    body: (report) => report,
  },
  'report.started': {
    webhook: 'reportStarted',
    label: 'Report started: an inspector started a report (it left new)',
    body: typed('report.started'),
  },
};

export const EVENT_TYPE_NAMES = Object.keys(EVENT_TYPES) as EventType[];

/** What a new integration receives: what every integration received before there were other types. */
export const DEFAULT_EVENT_TYPES: readonly EventType[] = ['report.published'];

/** The body of an attempt of an event of `type` whose report is `report` (JSON text). */
export const webhookBody = (type: EventType, report: string): string => EVENT_TYPES[type].body(report);
