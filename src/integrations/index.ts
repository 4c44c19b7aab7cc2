/** The integrations component (API keys, webhook settings and deliveries, publishing), as the app uses it. */
export { ApiKeyCache, type KeyAuthenticator } from './api-key-cache.js';
export { createKey, revokeIntegration } from './api-keys.js';
export { listDeliveries } from './deliveries.js';
export {
  recoverFailedEvents,
  redeliverCompanyEvent,
  revokeCompanyKey,
  rotateWebhookSecret,
  saveWebhook,
} from './integration-actions.js';
export { integrationsRouter } from './application-routes.js';
export { authRouter } from './auth-route.js';
export { createNotifier, type Notifier } from './notifier.js';
export { publishReport, type PublishDelivery } from './publish.js';
export { startReport } from './start.js';
export { DEFAULT_EVENT_TYPES, EVENT_TYPE_NAMES, EVENT_TYPES } from './event-types.js';
export { notificationApplies } from './publish-without-attempt.js';
export { DeliveryWorker } from './delivery-worker.js';
export type { RetryPolicy } from './event-life.js';
export { sweepOldEvents } from './event-batches.js';
export { placeEvents } from './feed-positions.js';
export { eventsRouter } from './events-routes.js';
export { requireApiKey } from './require-key.js';
export { INTEGRATION_FIELD_WORDING, keyNotFound } from './integration-error-wording.js';
export { sandboxRouter } from './sandbox-routes.js';
export { readIntegration } from './settings.js';
export { noWebhookAddress, sendTestDelivery } from './test-delivery.js';
