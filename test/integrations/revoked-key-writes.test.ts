import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { createApp } from '../../src/app.js';
import { listen } from '../../src/platform/http/listen.js';
import { assertMatchesContract } from '../support/contract.js';
import { APP_TOKEN, api, appDeps, newCompany, pool, reportInput, unique } from '../support/harness.js';

/** An answer read whole from a raw request, with its body parsed. */
function answerOf(
  req: http.ClientRequest,
): Promise<{ status: number; body: unknown; headers: Record<string, string> }> {
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

/**
 * The key of a write is checked before its body is read, so a slow body can arrive after the key was
 * revoked: the write still commits only if its key exists when it commits. Through a real listening
 * server (supertest sends a body whole), against the test database.
 */
describe('POST /reports/new with a key revoked while the body arrives', () => {
  it('answers 400 "invalid API key" and writes nothing', async () => {
    const company = await newCompany();
    const { rows } = await pool().query<{ id: string }>('SELECT id FROM api_keys WHERE company_id = $1', [
      company.companyId,
    ]);
    const keyId = rows[0]!.id;
    const server = await listen(createApp(appDeps(pool())), 0, '127.0.0.1');
    try {
      const marker = unique('client');
      const body = Buffer.from(JSON.stringify(reportInput({ clientNames: marker })));
      const req = http.request({
        host: '127.0.0.1',
        port: (server.address() as AddressInfo).port,
        method: 'POST',
        path: '/reports/new',
        headers: { 'Content-Type': 'application/json', 'Content-Length': body.length, 'X-API-KEY': company.key },
      });
      const answer = answerOf(req);
      req.write(body.subarray(0, body.length / 2));
      // The key was accepted: the statement that found it also recorded its first use.
      let checked = false;
      for (let i = 0; i < 500 && !checked; i++) {
        const { rows: used } = await pool().query('SELECT 1 FROM api_keys WHERE id = $1 AND last_used_at IS NOT NULL', [
          keyId,
        ]);
        checked = used.length > 0;
        if (!checked) await sleep(20);
      }
      expect(checked, 'the key checked').to.equal(true);
      await api()
        .delete(`/internal/companies/${company.companyId}/api-keys/${keyId}`)
        .set('Authorization', `Bearer ${APP_TOKEN}`)
        .expect(204);
      req.end(body.subarray(body.length / 2));

      const res = await answer;
      assertMatchesContract('post', '/reports/new', res);
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal({ error: 'invalid API key' });
      const { rows: written } = await pool().query('SELECT 1 FROM reports WHERE $1 = ANY (client_names)', [marker]);
      expect(written).to.deep.equal([]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
