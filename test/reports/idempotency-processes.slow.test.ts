import { expect } from 'chai';
import { api, newCompany, pool, reportInput, unique } from '../support/harness.js';
import { startServer, type RunningServer } from '../support/server-process.js';

/** Idempotency-Key on POST /reports/new (draft-ietf-httpapi-idempotency-key-header), through HTTP. */

describe('POST /reports/new: 50 identical requests with one Idempotency-Key at once, on two processes', () => {
  let servers: RunningServer[] = [];
  after(() => servers.forEach((s) => s.kill()));

  // A request that reaches a server while another request of that server holds the key gets 409; one
  // whose statement meets the other server's key waits for its commit and answers with its report.
  it('make exactly one report; every answer is that report or a 409 to retry', async () => {
    servers = await Promise.all([startServer(), startServer()]);
    const company = await newCompany();
    const key = unique('key');
    const body = reportInput({ notes: 'once' });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        api(servers[i % 2]!.baseUrl)
          .post('/reports/new')
          .set('X-API-KEY', company.key)
          .set('Idempotency-Key', key)
          .send(body),
      ),
    );
    const { rows } = await pool().query<{ id: string }>('SELECT id FROM reports WHERE company_id = $1', [
      company.companyId,
    ]);
    expect(rows).to.have.length(1);
    const answered = answers.map((res) => (res.status === 200 ? `200 ${res.body.id}` : String(res.status)));
    expect(
      answered.filter((a) => a !== `200 ${rows[0]!.id}` && a !== '409'),
      answered.join(','),
    ).to.deep.equal([]);
    expect(answered).to.include(`200 ${rows[0]!.id}`);
    // Once answered, every retry gets that answer.
    const retry = await api(servers[1]!.baseUrl)
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      .set('Idempotency-Key', key)
      .send(body)
      .expect(200);
    expect(retry.body.id).to.equal(rows[0]!.id);
  });
});
