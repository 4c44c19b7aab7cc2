import type { Queryable } from '../db/pool.js';
import { listKeys, type ApiKeySummary } from './api-keys.js';

export interface WebhookSettings {
  url: string;
  secret: string;
}

/**
 * Sets the webhook address and its signing secret on the company's active integration, starting
 * one when none is active; the upsert on the one-active-integration index makes that race-free.
 */
export async function setWebhook(
  db: Queryable,
  companyId: string,
  url: string,
  secret: string,
): Promise<WebhookSettings> {
  const { rows } = await db.query<WebhookSettings>(
    `INSERT INTO integrations (company_id, webhook_url, webhook_secret) VALUES ($1, $2, $3)
     ON CONFLICT (company_id) WHERE revoked_at IS NULL
       DO UPDATE SET webhook_url = EXCLUDED.webhook_url, webhook_secret = EXCLUDED.webhook_secret
     RETURNING webhook_url AS url, webhook_secret AS secret`,
    [companyId, url, secret],
  );
  return rows[0]!;
}

export interface IntegrationView {
  active: boolean;
  webhookUrl: string | null;
  secret: string | null;
  keys: ApiKeySummary[];
}

/** The company's active integration as Settings > Integrations > REST API shows it. */
export async function readIntegration(db: Queryable, companyId: string): Promise<IntegrationView> {
  const { rows } = await db.query<{ webhook_url: string | null; webhook_secret: string | null }>(
    'SELECT webhook_url, webhook_secret FROM integrations WHERE company_id = $1 AND revoked_at IS NULL',
    [companyId],
  );
  const active = rows[0];
  return {
    active: active !== undefined,
    webhookUrl: active?.webhook_url ?? null,
    secret: active?.webhook_secret ?? null,
    keys: active ? await listKeys(db, companyId) : [],
  };
}
