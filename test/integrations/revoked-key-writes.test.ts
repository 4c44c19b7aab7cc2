import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createApp } from '../../src/app.js';
import { databaseKeys } from '../../src/integrations/keys/api-key-cache.js';
import { listen } from '../../src/platform/http/listen.js';
import { assertMatchesContract } from '../support/contract.js';
import { APP_TOKEN, api, appDeps, newCompany, pool, reportInput, unique } from '../support/harness.js';

interface Answer {
  status: number;
  body: { id?: string; error?: string };
  headers: Record<string, string>;
}

/** An answer read whole from a raw request, with its body parsed. */
function answerOf(req: http.ClientRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode!, body: JSON.parse(text), headers: res.headers as Record<string, string> }),
      );
    });
  });
}

const idOfKey = async (companyId: string) =>
  (await pool().query<{ id: string }>('SELECT id FROM api_keys WHERE company_id = $1', [companyId])).rows[0]!.id;

const written = async (marker: string) =>
  (await pool().query('SELECT 1 FROM reports WHERE $1 = ANY (client_names)', [marker])).rows.length;

/**
 * POST /reports/new through a real listening server (supertest sends a body whole): half the body is
 * sent, the key is revoked once the server has accepted it, then the rest follows.
 */
async function createRevokedMidBody(
  company: { key: string; companyId: string },
  body: object,
  idempotencyKey?: string,
) {
  const keyId = await idOfKey(company.companyId);
  let accepted!: () => void;
  const keyAccepted = new Promise<void>((resolve) => (accepted = resolve));
  const keys = databaseKeys(pool());
  const apiKeys = {
    authenticate: async (key: string, since?: number) => {
      const principal = await keys.authenticate(key, since);
      accepted();
      return principal;
    },
  };
  const server = await listen(createApp(appDeps(pool(), { apiKeys })), 0, '127.0.0.1');
  try {
    const bytes = Buffer.from(JSON.stringify(body));
    const req = http.request({
      host: '127.0.0.1',
      port: (server.address() as AddressInfo).port,
      method: 'POST',
      path: '/reports/new',
      headers: {
        'Content-Type': 'application/json',
        'Content-Length': bytes.length,
        'X-API-KEY': company.key,
        ...(idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey }),
      },
    });
    const answer = answerOf(req);
    req.write(bytes.subarray(0, bytes.length / 2));
    await keyAccepted;
    await api()
      .delete(`/internal/companies/${company.companyId}/api-keys/${keyId}`)
      .set('Authorization', `Bearer ${APP_TOKEN}`)
      .expect(204);
    req.end(bytes.subarray(bytes.length / 2));
    const res = await answer;
    assertMatchesContract('post', '/reports/new', res);
    return res;
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/**
 * The key of a write is checked before its body is read, so a slow body can arrive after the key was
 * revoked: the write's statement finds its key at commit or writes nothing, and that refusal comes
 * before anything else the write would answer.
 */
describe('POST /reports/new with a key revoked while the body arrives', () => {
  it('answers 400 "invalid API key" and writes nothing', async () => {
    const company = await newCompany();
    const marker = unique('client');
    const res = await createRevokedMidBody(company, reportInput({ clientNames: marker }));
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal({ error: 'invalid API key' });
    expect(await written(marker)).to.equal(0);
  });

  it('does not give the answer its Idempotency-Key kept', async () => {
    const company = await newCompany();
    const idempotencyKey = unique('idem');
    const input = reportInput({ clientNames: unique('kept') });
    await api()
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      .set('Idempotency-Key', idempotencyKey)
      .send(input)
      .expect(200);

    const refused = await createRevokedMidBody(company, input, idempotencyKey);
    expect(refused.status).to.equal(400);
    expect(refused.body).to.deep.equal({ error: 'invalid API key' });
  });

  it('keeps no refusal for its Idempotency-Key: a retry with a valid key is written', async () => {
    const company = await newCompany();
    const idempotencyKey = unique('idem');
    const marker = unique('retried');
    const input = reportInput({ clientNames: marker });
    const refused = await createRevokedMidBody(company, input, idempotencyKey);
    expect(refused.status).to.equal(400);
    expect(refused.body).to.deep.equal({ error: 'invalid API key' });

    const { body: other } = await api()
      .post(`/internal/companies/${company.companyId}/api-keys`)
      .set('Authorization', `Bearer ${APP_TOKEN}`)
      .send({})
      .expect(201);
    const retried = await api()
      .post('/reports/new')
      .set('X-API-KEY', (other as { key: string }).key)
      .set('Idempotency-Key', idempotencyKey)
      .send(input)
      .expect(200);
    expect(retried.body.id).to.be.a('string');
    expect(await written(marker)).to.equal(1);
  });
});
