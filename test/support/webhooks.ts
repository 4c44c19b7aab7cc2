import { expect } from 'chai';
import type { Express } from 'express';
import { Webhook } from 'standardwebhooks';
import type { Pool } from '../../src/db/pool.js';
import { APP_TOKEN, api, newApp, newCompany, reportInput, unique, type TestCompany } from './harness.js';
import { HttpsReceiver, type ReceivedWebhook } from './https-receiver.js';

export const auth = { Authorization: `Bearer ${APP_TOKEN}` };

export interface WebhookSuite {
  receiver: HttpsReceiver;
  /** Trusts the receiver's certificate; 127.0.0.1/32 allowed as WEBHOOK_ALLOWED_CIDRS would. */
  allowed: { app: Express; pool: Pool };
}

/**
 * Hooks of a suite that delivers webhooks: a local HTTPS receiver and an app allowed to reach it,
 * started before the suite and stopped after it; after each test, every request the receiver got must
 * have matched openapi.yaml's webhooks section (headers and body). Read the fields inside hooks and tests.
 */
export function webhookSuite(): WebhookSuite {
  const suite = {} as WebhookSuite;
  before(async () => {
    suite.receiver = await HttpsReceiver.start();
    suite.allowed = newApp({ notifier: suite.receiver.notifier() });
  });
  after(async () => {
    await suite.receiver?.stop();
    await suite.allowed?.pool.end();
  });
  afterEach(() => {
    expect(suite.receiver.contractErrors.map((e) => e.message)).to.deep.equal([]);
  });
  return suite;
}

export interface CompanyWithWebhook extends TestCompany {
  /** The receiver path of this company's webhook. */
  path: string;
  /** The secret set with the address. */
  secret: string;
}

/** A company with a key and a webhook address on the receiver at a path of its own. */
export async function companyWithWebhook(receiver: HttpsReceiver): Promise<CompanyWithWebhook> {
  const company = await newCompany();
  const path = `/${unique('hook')}`;
  const res = await api()
    .put(`/internal/companies/${company.companyId}/webhook`)
    .set(auth)
    .send({ url: receiver.url(path) })
    .expect(200);
  return { ...company, path, secret: res.body.secret };
}

/** A report created through the partner API, so that publishing it notifies the integration. */
export async function apiReport(key: string): Promise<string> {
  const res = await api()
    .post('/reports/new')
    .set('X-API-KEY', key)
    .send(reportInput({ restId: unique('crm') }))
    .expect(200);
  return res.body.id;
}

/** Whether the standardwebhooks package accepts the request with this secret. */
export function verifies(request: ReceivedWebhook, secret: string): boolean {
  try {
    new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

/** The `v1,…` signatures of a request, in the order sent. */
export const signatures = (request: ReceivedWebhook): string[] =>
  String(request.headers['webhook-signature']).split(' ');

export async function deliveryLog(companyId: string): Promise<Array<Record<string, unknown>>> {
  return (await api().get(`/internal/companies/${companyId}/webhook-deliveries`).set(auth).expect(200)).body;
}
