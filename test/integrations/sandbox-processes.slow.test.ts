import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { SANDBOX_MAX_REPORTS } from '../../src/reports/sandbox.js';
import { api, reportInput, unique } from '../support/harness.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { create, fillSandbox, sandboxReports, withSandbox } from '../support/sandbox.js';

/** The sandbox on several service processes: each keeps the worlds apart, and the sandbox bound is exact. */

describe('the sandbox across two service processes', () => {
  let servers: RunningServer[] = [];
  after(() => servers.forEach((s) => s.kill()));

  it('keeps the worlds apart on every process, caches included', async () => {
    servers = await Promise.all([startServer(), startServer()]);
    const [one, two] = servers.map((s) => s.baseUrl) as [string, string];
    const company = await withSandbox();
    const restId = unique('crm');
    const live = await create(company.key, reportInput({ restId }), one).expect(200);
    // Read on both processes (now cached there), then a sandbox report with the same restId.
    for (const url of [one, two]) await api(url).get(`/reports?restId=${restId}`).set('X-API-KEY', company.key);
    const test = await create(company.testKey, reportInput({ restId }), two).expect(200);
    for (const url of [one, two]) {
      await api(url).get(`/reports/${test.body.id}`).set('X-API-KEY', company.key).expect(404);
      await api(url).get(`/reports/${live.body.id}`).set('X-API-KEY', company.testKey).expect(404);
      const liveList = await api(url).get(`/reports?restId=${restId}`).set('X-API-KEY', company.key).expect(200);
      expect(liveList.body.map((r: { id: string }) => r.id)).to.deep.equal([live.body.id]);
      const testList = await api(url).get(`/reports?restId=${restId}`).set('X-API-KEY', company.testKey).expect(200);
      expect(testList.body.map((r: { id: string }) => r.id)).to.deep.equal([test.body.id]);
    }
    await api(one).delete('/sandbox/reports').set('X-API-KEY', company.testKey).expect(204);
    for (const url of [one, two]) {
      await api(url).get(`/reports/${test.body.id}`).set('X-API-KEY', company.testKey).expect(404);
      await api(url).get(`/reports/${live.body.id}`).set('X-API-KEY', company.key).expect(200);
    }
  });
});

describe('the sandbox bound under concurrent creates on two service processes', () => {
  let servers: RunningServer[] = [];
  after(() => servers.forEach((s) => s.kill()));

  /**
   * A create sent again after a 429 or 503 (the company's share, the pool busy) once its Retry-After has
   * passed, as a partner would, until `deadline`. Sent again sooner, the retries of a slow burst use up the
   * key's requests of the minute, and the rest answer 429 for that minute whatever the sandbox holds.
   */
  async function createPatiently(key: string, target: string, deadline: number): Promise<number> {
    for (;;) {
      const res = await create(key, reportInput(), target);
      if ((res.status !== 429 && res.status !== 503) || Date.now() > deadline) return res.status;
      await sleep(Number(res.headers['retry-after'] ?? 1) * 1000 + Math.random() * 300);
    }
  }

  it('is exact: 300 creates at once with room for 100 make exactly 100, the others 409', async function () {
    this.timeout(120_000);
    servers = await Promise.all([startServer(), startServer()]);
    const company = await withSandbox();
    await fillSandbox(company, SANDBOX_MAX_REPORTS - 100);
    const deadline = Date.now() + 75_000;
    const statuses = await Promise.all(
      Array.from({ length: 300 }, (_, i) => createPatiently(company.testKey, servers[i % 2]!.baseUrl, deadline)),
    );
    const counts = statuses.reduce<Record<number, number>>((n, s) => ({ ...n, [s]: (n[s] ?? 0) + 1 }), {});
    expect(counts).to.deep.equal({ 200: 100, 409: 200 });
    expect(await sandboxReports(company)).to.equal(SANDBOX_MAX_REPORTS);
  });
});
