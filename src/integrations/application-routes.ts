import { Router, type Response } from 'express';
import type {
  ApiKeySummary,
  CreatedKey,
  IntegrationView,
  PublishInput,
  PublishResult,
  Report,
  SecretRotation,
  SecretRotationInput,
  WebhookDelivery,
  WebhookInput,
  WebhookSettings,
  WebhookTestResult,
} from '../api-types.js';
import { COMPANY, requireCompany, sandboxOf } from '../companies/index.js';
import { reportNotFound } from '../reports/index.js';
import { refuse } from '../core/errors.js';
import { pageLimit } from '../core/page-limit.js';
import type { Pool } from '../db/pool.js';
import { listKeys } from './keys/api-keys.js';
import { byOperator } from '../audit/index.js';
import { listDeliveries } from './webhooks/deliveries.js';
import type { Notifier } from './webhooks/notifier.js';
import { publishReport, type PublishDelivery } from './events/publish.js';
import { startReport } from './events/start.js';
import { applicationEventsRoutes } from './events-routes.js';
import {
  generateKey,
  readIntegration,
  revokeCompanyKey,
  revokeIntegration,
  rotateWebhookSecret,
  saveWebhook,
} from './integration-actions.js';

import { sendTestDelivery } from './webhooks/test-delivery.js';

/**
 * The application's side of a company's REST API integration (x-internal in openapi.yaml; requireAppToken
 * guards /internal): API keys, the webhook's address, secret and event types, test deliveries, the
 * delivery log, and starting and publishing a report, which record their events (event-types.ts).
 */
export function integrationsRouter(db: Pool, delivery: PublishDelivery): Router {
  const { notifier } = delivery;
  const router = Router();
  router.param('companyId', requireCompany(db));
  keyRoutes(router, db);
  webhookRoutes(router, db, notifier, 'webhook', itself, 'the company');
  webhookRoutes(router, db, notifier, 'sandbox/webhook', sandboxOf, 'the sandbox');
  reportRoutes(router, db, delivery);
  applicationEventsRoutes(router, db);

  router.get(`${COMPANY}/integration`, async (req, res: Response<IntegrationView>) => {
    res.json(await readIntegration(db, req.params.companyId!));
  });

  router.delete(`${COMPANY}/integration`, async (req, res) => {
    await revokeIntegration(db, req.params.companyId!, byOperator(req, req.params.companyId!));
    res.status(204).end();
  });

  return router;
}

/** Issuing, listing and revoking the company's API keys. */
function keyRoutes(router: Router, db: Pool): void {
  router.post(`${COMPANY}/api-keys`, async (req, res: Response<CreatedKey>) => {
    const mode = (req.body as { mode?: 'live' | 'test' } | undefined)?.mode ?? 'live';
    res.status(201).json(await generateKey(db, req.params.companyId!, mode, byOperator(req, req.params.companyId!)));
  });

  router.get(`${COMPANY}/api-keys`, async (req, res: Response<ApiKeySummary[]>) => {
    res.json(await listKeys(db, req.params.companyId!));
  });

  router.delete(`${COMPANY}/api-keys/:keyId`, async (req, res) => {
    await revokeCompanyKey(db, req.params.companyId!, req.params.keyId!, byOperator(req, req.params.companyId!));
    res.status(204).end();
  });
}

/** The company whose webhook settings a path names: the company's own, or its sandbox's (`/sandbox/webhook`). */
type Owner = (db: Pool, companyId: string) => Promise<string>;
const itself: Owner = async (_db, companyId) => companyId;

/** The webhook's address, secret and event types and a test delivery, of the company (`webhook`) or of its sandbox. */
function webhookRoutes(router: Router, db: Pool, notifier: Notifier, path: string, owner: Owner, whose: string): void {
  router.put(`${COMPANY}/${path}`, async (req, res: Response<WebhookSettings>) => {
    const { url, eventTypes } = req.body as WebhookInput;
    const by = byOperator(req, req.params.companyId!);
    res.json(await saveWebhook(db, await owner(db, req.params.companyId!), url, eventTypes, by));
  });

  router.post(`${COMPANY}/${path}/test`, async (req, res: Response<WebhookTestResult>) => {
    const by = byOperator(req, req.params.companyId!);
    res.json(await sendTestDelivery(db, notifier, await owner(db, req.params.companyId!), whose, by));
  });

  router.post(`${COMPANY}/${path}/secret`, async (req, res: Response<SecretRotation>) => {
    const { overlapSeconds } = (req.body ?? {}) as SecretRotationInput;
    const by = byOperator(req, req.params.companyId!);
    res.json(await rotateWebhookSecret(db, await owner(db, req.params.companyId!), whose, overlapSeconds, by));
  });
}

/** Starting and publishing a report (each may record its event), and the delivery log. */
function reportRoutes(router: Router, db: Pool, delivery: PublishDelivery): void {
  router.post(`${COMPANY}/reports/:reportId/start`, async (req, res: Response<Report>) => {
    const { companyId, reportId } = req.params as { companyId: string; reportId: string };
    res.json(await startReport(db, companyId, reportId, byOperator(req, companyId)));
  });

  router.post(`${COMPANY}/reports/:reportId/publish`, async (req, res: Response<PublishResult>) => {
    const { companyId, reportId } = req.params as { companyId: string; reportId: string };
    const input = req.body as PublishInput;
    const result = await publishReport(db, delivery, companyId, reportId, input, byOperator(req, companyId));
    if (!result) throw refuse.notFound(reportNotFound(reportId));
    res.json(result);
  });

  router.get(`${COMPANY}/webhook-deliveries`, async (req, res: Response<WebhookDelivery[]>) => {
    res.json(await listDeliveries(db, req.params.companyId!, pageLimit(req)));
  });
}
