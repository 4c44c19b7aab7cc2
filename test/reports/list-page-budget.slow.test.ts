import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { PAGE_BUDGET_BYTES } from '../../src/reports/read.js';
import { buildProduction } from '../../scripts/production-build.js';
import { api, newCompany, pool, reportInput, unique, type TestCompany } from '../support/harness.js';
import { startServer, type RunningServer } from '../support/server-process.js';

const REPORTS = 36;

/** A report with every field at its largest (about 440 kB of JSON; notes hold two-byte characters). */
const maximalReport = (i: number) => {
  const text = (n: number, c = 'x') => c.repeat(n);
  const email = (j: number) => `${text(300)}${String(j).padStart(2, '0')}@example.com`.slice(-320);
  return reportInput({
    restId: `${unique('maximal')}-`.padEnd(255, 'r'),
    fromRestService: text(255, 's'),
    clientNames: Array.from({ length: 50 }, () => text(320, 'n')),
    clientEmails: Array.from({ length: 50 }, (_, j) => email(j)),
    clientPhones: Array.from({ length: 50 }, () => text(50, '5')),
    inspectionDate: `2026-0${1 + (i % 3)}-01`,
    address: text(1000, 'a'),
    invoiceItems: Array.from({ length: 200 }, () => `${text(989, 'i')}: $1,250.00`),
    yearBuilt: text(20, '1'),
    squareFeet: text(20, '2'),
    notes: text(100_000, 'é'),
    agentName: text(320, 'g'),
    agentEmail: email(99),
    agentPhone: text(50, '6'),
  });
};

/** Parses `Link: </reports?...>; rel="next"` into the relative URL, or undefined. */
const nextLink = (header: string | undefined) => (header ? /^<([^>]+)>; rel="next"$/.exec(header)?.[1] : undefined);

/** The Linux memory figures of a process, in MB: resident now, and the peak since the last reset. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) / 1024;
  return { rss: mb('VmRSS'), peak: mb('VmHWM') };
}

/** Sets the peak resident size (VmHWM) of a process back to its current size. */
const resetPeak = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, '5');

describe('list pages within their byte budget, with reports at their largest', function () {
  this.timeout(240_000);
  let company: TestCompany;
  let inListOrder: string[];

  before(async () => {
    company = await newCompany();
    for (let i = 0; i < REPORTS; i++) {
      await api().post('/reports/new').set('X-API-KEY', company.key).send(maximalReport(i)).expect(200);
    }
    const { rows } = await pool().query<{ id: string }>(
      'SELECT id FROM reports WHERE company_id = $1 ORDER BY inspection_date DESC, created_at DESC, id DESC',
      [company.companyId],
    );
    inListOrder = rows.map((r) => r.id);
  });

  it('ends a page before the report that would take it past about 1 MiB, with a Link to the rest', async () => {
    const res = await api().get('/reports?limit=100').set('X-API-KEY', company.key).expect(200);
    expect(res.body.length).to.be.within(1, 3);
    expect(Buffer.byteLength(res.text)).to.be.at.most(PAGE_BUDGET_BYTES);
    expect(nextLink(res.headers.link)).to.match(/^\/reports\?limit=100&after=/);
  });

  it('holds one report even when that report alone is larger than the budget', async () => {
    const small = await newCompany();
    const send = (inspectionDate: string) =>
      api().post('/reports/new').set('X-API-KEY', small.key).send(reportInput({ inspectionDate })).expect(200);
    const { body: big } = await send('2026-05-02');
    const { body: next } = await send('2026-05-01');
    // Larger than any body can make it (1 MiB at most): written in the database, as a report could grow.
    await pool().query(`UPDATE reports SET notes = repeat('x', $3) WHERE company_id = $1 AND id = $2`, [
      small.companyId,
      big.id,
      PAGE_BUDGET_BYTES + 1,
    ]);
    const first = await api().get('/reports?limit=10').set('X-API-KEY', small.key).expect(200);
    expect(first.body.map((r: { id: string }) => r.id)).to.deep.equal([big.id]);
    const last = await api().get(nextLink(first.headers.link)!).set('X-API-KEY', small.key).expect(200);
    expect(last.body.map((r: { id: string }) => r.id)).to.deep.equal([next.id]);
    expect(last.headers.link).to.equal(undefined);
  });

  it('visits every report exactly once, in list order, by following the Link of budget-ended pages', async () => {
    const seen: string[] = [];
    const sizes: number[] = [];
    let url: string | undefined = '/reports?limit=100';
    for (let pages = 0; url && pages <= REPORTS; pages++) {
      const res = await api().get(url).set('X-API-KEY', company.key).expect(200);
      seen.push(...(res.body as { id: string }[]).map((r) => r.id));
      sizes.push(res.body.length);
      url = nextLink(res.headers.link);
    }
    expect(url, 'the walk ends').to.equal(undefined);
    expect(seen).to.deep.equal(inListOrder);
    expect(Math.max(...sizes)).to.be.below(100);
  });

  describe('24 largest pages at once, on a server process as production runs it', () => {
    let server: RunningServer | undefined;
    after(async () => {
      if (server?.child.exitCode === null) {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    });

    it('answers them all with no 5xx, grows by less than 150 MB and keeps answering another company', async () => {
      // The other company calls as fast as it is answered for as long as the pages take: past the default
      // budget of 600 requests a minute, which is not what this measures.
      server = await startServer(buildProduction(), { RATE_LIMIT_PER_MINUTE: '0' });
      const { pid } = server.child;
      const http = api(server.baseUrl);
      const other = await newCompany();
      const { body: created } = await http
        .post('/reports/new')
        .set('X-API-KEY', other.key)
        .send(reportInput())
        .expect(200);
      // Warm up every path once, so that the growth measured is the pages', not code loaded on first use.
      await http.get('/reports?limit=100').set('X-API-KEY', company.key).expect(200);
      await http.get(`/reports/${created.id}`).set('X-API-KEY', other.key).expect(200);
      resetPeak(pid!);
      const before = memory(pid!).rss;

      // The company's share is one page at a time once the other company is at work: pages that wait past
      // the turn's bound are refused with 429 and Retry-After, and sent again then, as a partner would.
      const page = async () => {
        for (let attempt = 0; ; attempt++) {
          const res = await http.get('/reports?limit=100').set('X-API-KEY', company.key);
          if (res.status !== 429 || attempt === 5) return res;
          expect(res.headers['retry-after']).to.match(/^\d+$/);
          await sleep(Number(res.headers['retry-after']) * 1000);
        }
      };
      let burstDone = false;
      const pages = Promise.all(Array.from({ length: 24 }, page)).finally(() => {
        burstDone = true;
      });
      // Another company's calls, two at a time, for as long as the pages take.
      const latencies: number[] = [];
      const otherCalls = [
        () => http.get(`/reports/${created.id}`).set('X-API-KEY', other.key),
        () => http.get('/reports').set('X-API-KEY', other.key),
        () => http.get('/auth').set('X-API-KEY', other.key),
        () => http.post('/reports/new').set('X-API-KEY', other.key).send(reportInput()),
      ];
      const caller = async () => {
        for (let i = 0; !burstDone || i < otherCalls.length; i++) {
          const started = performance.now();
          const res = await otherCalls[i % otherCalls.length]!();
          latencies.push(performance.now() - started);
          expect(res.status, res.text).to.equal(200);
          if (i > 1000) throw new Error('the 24 pages never finished');
        }
      };
      await Promise.all([caller(), caller()]);

      const answers = await pages;
      expect(answers.map((res) => res.status)).to.deep.equal(Array(24).fill(200));
      for (const res of answers) expect(Buffer.byteLength(res.text)).to.be.at.most(PAGE_BUDGET_BYTES);
      const growth = memory(pid!).peak - before;
      latencies.sort((a, b) => a - b);
      const p99 = latencies[Math.ceil(latencies.length * 0.99) - 1]!;
      expect(growth, `RSS ${before.toFixed(0)} MB, peak ${(before + growth).toFixed(0)} MB`).to.be.below(150);
      // A bound on answering at all, not on speed: the machine running the tests may be busy with other work.
      expect(p99, `p99 of ${latencies.length} calls of another company`).to.be.below(10_000);
    });
  });
});
