// The integrations component's public surface: API keys, webhook settings and deliveries, publishing.

export { ApiKeyCache, type KeyAuthenticator } from './keys/api-key-cache.js';
export { createKey, findKey, pageKeys } from './keys/api-keys.js';
export { listDeliveries, pageDeliveries } from './webhooks/deliveries.js';
export {
  DEFAULT_SECRET_OVERLAP_SECONDS,
  generateKey,
  readIntegration,
  readIntegrationSettings,
  revealWebhookSecret,
  recoverFailedEvents,
  redeliverCompanyEvent,
  revokeCompanyKey,
  revokeIntegration,
  rotateWebhookSecret,
  saveWebhook,
} from './integration-actions.js';
export { integrationsRouter } from './application-routes.js';
export { authRouter } from './keys/auth-route.js';
export { createNotifier, type Notifier } from './webhooks/notifier.js';
export { publishReport, type PublishDelivery } from './events/publish.js';
export { startReport } from './events/start.js';
export { DEFAULT_EVENT_TYPES, EVENT_TYPE_NAMES, EVENT_TYPES } from './webhooks/event-types.js';
export { notificationApplies } from './events/publish-without-attempt.js';
export { DeliveryWorker } from './events/delivery-worker.js';
export type { RetryPolicy } from './events/event-life.js';
export { sweepOldEvents } from './events/event-batches.js';
export { placeEvents } from './events/feed-positions.js';
export { eventsRouter } from './events-routes.js';
export { requireApiKey } from './keys/require-key.js';
export { eventNotFound, INTEGRATION_FIELD_WORDING, keyNotFound } from './integration-error-wording.js';
export { sandboxRouter } from './sandbox-routes.js';
export { noWebhookAddress, sendTestDelivery } from './webhooks/test-delivery.js';
export { NO_WEBHOOK_ADDRESS } from './webhooks/settings.js';
