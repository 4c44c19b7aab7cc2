import { Router, type Response } from 'express';
import type {
  ApiKeySummary,
  Company,
  CompanyInput,
  CreatedKey,
  IntegrationView,
  PublishInput,
  PublishResult,
  Report,
  ReportInput,
  SecretRotation,
  SecretRotationInput,
  User,
  UserInput,
  WebhookDelivery,
  WebhookInput,
  WebhookSettings,
  WebhookTestResult,
} from '../api-types.js';
import type { Pool } from '../db/pool.js';
import { conflict, notFound } from '../http/errors.js';
import { quoted } from '../http/quoted.js';
import { publishReport } from '../use-cases/publish-report.js';
import { createKey, listKeys, revokeIntegration, revokeKey } from '../store/api-keys.js';
import { addUser, companyExists, createCompany } from '../store/companies.js';
import { isUuid } from '../store/ids.js';
import { readIntegration, rotateSecret, setWebhook } from '../store/integrations.js';
import { startReport, type ReportWriter } from '../store/report-writes.js';
import { findForCompany } from '../store/reports.js';
import { noWebhookAddress, sendTestDelivery } from '../use-cases/send-test-delivery.js';
import { listDeliveries } from '../store/webhook-deliveries.js';
import type { Notifier } from '../webhook/notifier.js';
import { newWebhookSecret } from '../webhook/signing.js';
import { pageLimit } from './page-limit.js';

const COMPANY = '/internal/companies/:companyId';
/** openapi.yaml's default of `overlapSeconds` (one day, as Stripe's roll); the validator does not fill defaults in. */
const DEFAULT_SECRET_OVERLAP_SECONDS = 86_400;

/** The application's internal API (x-internal in openapi.yaml); requireAppToken guards /internal. */
export function applicationRouter(db: Pool, notifier: Notifier, writes: ReportWriter): Router {
  const router = Router();

  // Every route below names a company: an unknown or malformed id is 404 before any handler runs.
  router.param('companyId', async (_req, _res, next, companyId: string) => {
    if (!isUuid(companyId) || !(await companyExists(db, companyId)))
      throw notFound(`company ${quoted(companyId)} not found`);
    next();
  });

  router.post('/internal/companies', async (req, res: Response<Company>) => {
    res.status(201).json(await createCompany(db, (req.body as CompanyInput).name));
  });

  router.post(`${COMPANY}/users`, async (req, res: Response<User>) => {
    const { name, email } = req.body as UserInput;
    const user = await addUser(db, req.params.companyId!, name, email);
    if (!user) throw conflict(`the company already has a user with e-mail ${quoted(email)}`);
    res.status(201).json(user);
  });

  router.post(`${COMPANY}/api-keys`, async (req, res: Response<CreatedKey>) => {
    res.status(201).json(await createKey(db, req.params.companyId!));
  });

  router.get(`${COMPANY}/api-keys`, async (req, res: Response<ApiKeySummary[]>) => {
    res.json(await listKeys(db, req.params.companyId!));
  });

  router.delete(`${COMPANY}/api-keys/:keyId`, async (req, res) => {
    if (!(await revokeKey(db, req.params.companyId!, req.params.keyId!)))
      throw notFound(`API key ${quoted(req.params.keyId!)} not found`);
    res.status(204).end();
  });

  router.put(`${COMPANY}/webhook`, async (req, res: Response<WebhookSettings>) => {
    const { url } = req.body as WebhookInput;
    res.json(await setWebhook(db, req.params.companyId!, url, newWebhookSecret()));
  });

  router.post(`${COMPANY}/webhook/test`, async (req, res: Response<WebhookTestResult>) => {
    res.json(await sendTestDelivery(db, notifier, req.params.companyId!));
  });

  router.post(`${COMPANY}/webhook/secret`, async (req, res: Response<SecretRotation>) => {
    const { overlapSeconds } = (req.body ?? {}) as SecretRotationInput;
    const rotated = await rotateSecret(
      db,
      req.params.companyId!,
      newWebhookSecret(),
      overlapSeconds ?? DEFAULT_SECRET_OVERLAP_SECONDS,
    );
    if (!rotated) throw noWebhookAddress();
    res.json(rotated);
  });

  router.get(`${COMPANY}/integration`, async (req, res: Response<IntegrationView>) => {
    res.json(await readIntegration(db, req.params.companyId!));
  });

  router.delete(`${COMPANY}/integration`, async (req, res) => {
    await revokeIntegration(db, req.params.companyId!);
    res.status(204).end();
  });

  router.post(`${COMPANY}/reports`, async (req, res: Response<Report>) => {
    const companyId = req.params.companyId!;
    const { id } = await writes.createOrUpdate({ companyId }, req.body as ReportInput);
    res.status(201).json((await findForCompany(db, companyId, id))!);
  });

  router.post(`${COMPANY}/reports/:reportId/start`, async (req, res: Response<Report>) => {
    const { companyId, reportId } = req.params as { companyId: string; reportId: string };
    const status = await startReport(db, companyId, reportId);
    if (!status) throw notFound(`report ${quoted(reportId)} not found`);
    if (status === 'published') throw conflict(`report ${quoted(reportId)} is published`);
    res.json((await findForCompany(db, companyId, reportId))!);
  });

  router.post(`${COMPANY}/reports/:reportId/publish`, async (req, res: Response<PublishResult>) => {
    const { companyId, reportId } = req.params as { companyId: string; reportId: string };
    const result = await publishReport(db, notifier, companyId, reportId, req.body as PublishInput);
    if (!result) throw notFound(`report ${quoted(reportId)} not found`);
    res.json(result);
  });

  router.get(`${COMPANY}/webhook-deliveries`, async (req, res: Response<WebhookDelivery[]>) => {
    res.json(await listDeliveries(db, req.params.companyId!, pageLimit(req)));
  });

  return router;
}
