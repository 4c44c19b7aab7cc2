import { quoted } from '../core/quoted.js';
import type { FieldWording } from '../core/error-wording-types.js';
import { EVENT_TYPE_NAMES } from './webhooks/event-types.js';

const HTTPS_URL = 'must be an absolute https:// URL';

/** The integration's fields' schema failures in words (after the field's name). */
export const INTEGRATION_FIELD_WORDING: FieldWording = {
  url: { format: HTTPS_URL, pattern: HTTPS_URL },
  publishedUrl: { format: HTTPS_URL, pattern: HTTPS_URL },
  mode: { enum: 'must be live or test' },
  eventTypes: {
    enum: `must be one of ${EVENT_TYPE_NAMES.join(', ')}`,
    type: 'must be an array of event types',
    minItems: 'must name at least one event type',
    uniqueItems: 'must not name a type twice',
  },
};

/** The 404 of an API key id in a path. */
export const keyNotFound = (id: string) => `API key ${quoted(id)} not found`;

/** The 404 of an event id in a path: unknown, another company's or the other mode's alike. */
export const eventNotFound = (id: string) => `event ${quoted(id)} not found`;
