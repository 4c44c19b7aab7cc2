import { expect } from 'chai';
import http from 'node:http';
import type { Server } from 'node:http';
import { Admission, LENT_BYTES, type AdmissionOptions } from '../../src/platform/limits/admission.js';
import { EventLoopLoad } from '../../src/platform/limits/loop-load.js';
import { listen } from '../../src/platform/http/listen.js';
import { assertMatchesContract } from '../support/contract.js';
import {
  api,
  newApp,
  newCompany,
  newTestKey,
  pool,
  reportInput,
  testLimits,
  type TestCompany,
} from '../support/harness.js';
import { gate, until } from '../support/wait.js';
import { databaseKeys } from '../../src/integrations/keys/api-key-cache.js';

/** A request whose body is sent in part: it holds its place in its company's share until finished. */
interface HeldRequest {
  finish(): void;
  answered: Promise<{ status: number; body: unknown; headers: Record<string, string> }>;
  settled: () => boolean;
}

function heldCreate(baseUrl: string, key: string, body = JSON.stringify(reportInput())): HeldRequest {
  const url = new URL('/reports/new', baseUrl);
  let settled = false;
  let req!: http.ClientRequest;
  const answered = new Promise<{ status: number; body: unknown; headers: Record<string, string> }>(
    (resolve, reject) => {
      req = http.request(
        url,
        {
          method: 'POST',
          headers: { 'X-API-KEY': key, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            settled = true;
            const answer = {
              status: res.statusCode!,
              body: JSON.parse(text),
              headers: res.headers as Record<string, string>,
            };
            assertMatchesContract('post', '/reports/new', { ...answer, text });
            resolve(answer);
          });
        },
      );
      req.on('error', reject);
    },
  );
  req.write(body.slice(0, 10));
  const finish = () => {
    if (!req.writableEnded) req.end(body.slice(10));
  };
  return { finish, answered, settled: () => settled };
}

/** A company's share of 1 MiB (and 8 requests) while others are at work, in a process of 32 MiB. */
const BYTE_SHARES: AdmissionOptions = {
  perCompany: 8,
  companyBytes: 1 << 20,
  processBytes: 32 << 20,
  maxWaiting: 8,
  waitMillis: 60_000,
};

describe('partner limits: each key has a budget, each company a fair share of the process', () => {
  const servers: Server[] = [];
  let a: TestCompany;
  let b: TestCompany;

  before(async () => {
    [a, b] = await Promise.all([newCompany(), newCompany()]);
  });
  after(() => Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))));

  /** A listening app (partial bodies need a real socket) whose admission has these options. */
  async function servedWith(options: AdmissionOptions): Promise<{ admission: Admission; baseUrl: string }> {
    const admission = new Admission(options);
    const server = await listen(newApp({ limits: { ...testLimits(pool()), admission } }).app, 0, '127.0.0.1');
    servers.push(server);
    const address = server.address() as { port: number };
    return { admission, baseUrl: `http://127.0.0.1:${address.port}` };
  }

  const ratelimit = (res: { headers: Record<string, string> }) => res.headers.ratelimit;

  it('tells every answer to a valid key its budget in the RateLimit fields, errors included', async () => {
    const ok = await api().get('/auth').set('X-API-KEY', a.key).expect(200);
    expect(ok.headers['ratelimit-policy']).to.equal('"per-key";q=1000000;w=60');
    expect(ratelimit(ok)).to.match(/^"per-key";r=\d+;t=\d+$/);
    const missing = await api().get('/reports/nope').set('X-API-KEY', a.key).expect(404);
    expect(ratelimit(missing)).to.match(/^"per-key";r=\d+;t=\d+$/);
    const bad = await api().post('/reports/new').set('X-API-KEY', a.key).send({}).expect(400);
    expect(ratelimit(bad)).to.match(/^"per-key";r=\d+;t=\d+$/);
  });

  it('answers 429 with Retry-After once the key has used its budget of the minute', async () => {
    const company = await newCompany();
    const app = newApp({ limits: testLimits(pool(), { perMinute: 3 }) }).app;
    for (const left of [2, 1, 0]) {
      const res = await api(app).get('/auth').set('X-API-KEY', company.key).expect(200);
      expect(ratelimit(res)).to.match(new RegExp(`^"per-key";r=${left};t=\\d+$`));
    }
    const refused = await api(app).get('/reports').set('X-API-KEY', company.key).expect(429);
    expect(refused.body.error).to.match(/used its 3 requests of this minute/);
    const reset = Number(/t=(\d+)/.exec(ratelimit(refused)!)![1]);
    expect(Number(refused.headers['retry-after'])).to.equal(reset);
    // Another key of its own budget is not affected.
    await api(app).get('/auth').set('X-API-KEY', b.key).expect(200);
  });

  it('holds the budget across two processes: each adds the other’s requests at its next sync', async () => {
    const company = await newCompany();
    const first = testLimits(pool(), { perMinute: 10 });
    const second = testLimits(pool(), { perMinute: 10 });
    const one = newApp({ limits: first }).app;
    const two = newApp({ limits: second }).app;
    for (let i = 0; i < 6; i++) await api(one).get('/auth').set('X-API-KEY', company.key).expect(200);
    await first.rateLimiter.sync();
    await api(two).get('/auth').set('X-API-KEY', company.key).expect(200);
    await second.rateLimiter.sync();
    // 7 of 10 used across the two: 3 more, then 429, on either process.
    for (let i = 0; i < 3; i++) await api(two).get('/auth').set('X-API-KEY', company.key).expect(200);
    await api(two).get('/auth').set('X-API-KEY', company.key).expect(429);
    await second.rateLimiter.sync();
    await first.rateLimiter.sync();
    await api(one).get('/auth').set('X-API-KEY', company.key).expect(429);
  });

  it('sends no RateLimit fields when the budget is turned off (RATE_LIMIT_PER_MINUTE=0)', async () => {
    const limits = testLimits(pool());
    const app = newApp({ limits: { admission: limits.admission } }).app;
    const res = await api(app).get('/auth').set('X-API-KEY', a.key).expect(200);
    expect(res.headers).to.not.have.property('ratelimit');
    expect(res.headers).to.not.have.property('ratelimit-policy');
  });

  it("queues a company's requests past its share behind its own, never another company's", async () => {
    const { admission, baseUrl } = await servedWith({
      perCompany: 2,
      companyBytes: 8 << 20,
      processBytes: 32 << 20,
      maxWaiting: 1,
      waitMillis: 60_000,
    });
    const held = [heldCreate(baseUrl, a.key), heldCreate(baseUrl, a.key)];
    await until(() => admission.load(a.companyId).inFlight === 2, 'holding two of company A');
    const third = api(baseUrl)
      .get('/auth')
      .set('X-API-KEY', a.key)
      .then((res) => res);
    await until(() => admission.load(a.companyId).waiting === 1, 'queueing the third');
    // Company B is served while A's third request waits; A's fourth finds A's queue full.
    await api(baseUrl).get('/auth').set('X-API-KEY', b.key).expect(200);
    const full = await api(baseUrl).get('/auth').set('X-API-KEY', a.key).expect(429);
    expect(full.headers['retry-after']).to.equal('1');
    expect(full.body.error).to.match(/too many requests of this company in flight \(queue full\)/);
    expect(admission.load(a.companyId).waiting, 'the third still waits').to.equal(1);

    for (const request of held) request.finish();
    for (const request of held) expect((await request.answered).status).to.equal(200);
    expect((await third).status, 'its turn came').to.equal(200);
  });

  it("gives a company's sandbox a share of its own: its stalled uploads leave the company's live creates served", async () => {
    const company = await newCompany();
    const sandbox = await newTestKey(company.companyId);
    // A share of 4 requests and 2 s of waiting, as a deployment's defaults.
    const { admission, baseUrl } = await servedWith({
      perCompany: 4,
      companyBytes: 1 << 20,
      processBytes: 32 << 20,
      maxWaiting: 256,
      waitMillis: 2_000,
    });
    const stalled = Array.from({ length: 12 }, () => heldCreate(baseUrl, sandbox.key));
    const held = (id: string) => admission.load(id).inFlight + admission.load(id).waiting;
    try {
      await until(() => held(sandbox.sandboxId) + held(company.companyId) === 12, 'twelve test-key uploads held');
      const create = (key: string) =>
        api(baseUrl)
          .post('/reports/new')
          .set('X-API-KEY', key)
          .send(reportInput())
          .then((res) => res.status);
      // Ten live creates of the company at once, as ten of another company's.
      const [live, other] = await Promise.all([
        Promise.all(Array.from({ length: 10 }, () => create(company.key))),
        Promise.all(Array.from({ length: 10 }, () => create(b.key))),
      ]);
      expect(live, "the company's live creates").to.deep.equal(Array(10).fill(200));
      expect(other, "another company's creates").to.deep.equal(Array(10).fill(200));
    } finally {
      for (const upload of stalled) upload.finish();
    }
    // The sandbox's own queue: each of its uploads is written, or refused for its share alone.
    for (const upload of stalled) expect([200, 429]).to.include((await upload.answered).status);
  });

  it('lends a company alone more places, and takes them back while another company is at work', async () => {
    const company = await newCompany();
    const { admission, baseUrl } = await servedWith({
      perCompany: 1,
      perCompanyAlone: 3,
      companyBytes: 8 << 20,
      processBytes: 32 << 20,
      maxWaiting: 8,
      waitMillis: 60_000,
    });
    const held = [heldCreate(baseUrl, company.key), heldCreate(baseUrl, company.key), heldCreate(baseUrl, company.key)];
    await until(() => admission.load(company.companyId).inFlight === 3, 'three in flight while alone');
    // Another company at work: this one's share is one now.
    await api(baseUrl).get('/auth').set('X-API-KEY', b.key).expect(200);
    const fourth = api(baseUrl)
      .get('/auth')
      .set('X-API-KEY', company.key)
      .then((res) => res);
    await until(() => admission.load(company.companyId).waiting === 1, 'the fourth waiting');
    held[0]!.finish();
    expect((await held[0]!.answered).status).to.equal(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(admission.load(company.companyId).waiting, 'two in flight: past its share of one').to.equal(1);
    held[1]!.finish();
    held[2]!.finish();
    expect((await fourth).status).to.equal(200);
  });

  it('holds a company that moved more than its share while the event loop is busy; the others go on', async () => {
    let busy = false;
    const options = { perCompany: 8, companyBytes: 8 << 20, processBytes: 32 << 20, maxWaiting: 8, waitMillis: 60_000 };
    const { admission, baseUrl } = await servedWith({ ...options, loop: { busy: () => busy } });
    // A moves more than B lately (three requests to B's one); both are at work.
    for (let i = 0; i < 3; i++) await api(baseUrl).get('/auth').set('X-API-KEY', a.key).expect(200);
    await api(baseUrl).get('/auth').set('X-API-KEY', b.key).expect(200);
    busy = true;
    const held = api(baseUrl)
      .get('/auth')
      .set('X-API-KEY', a.key)
      .then((res) => res);
    await until(() => admission.load(a.companyId).waiting === 1, "A's request waiting for the loop");
    // B, under its share, is served at once; A still waits while the loop is busy.
    await api(baseUrl).get('/auth').set('X-API-KEY', b.key).expect(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(admission.load(a.companyId).waiting, 'A still waiting').to.equal(1);
    busy = false;
    expect((await held).status, 'served once the loop is no longer busy').to.equal(200);

    // A company alone is never held for the loop: nobody else waits for it.
    const alone = await newCompany();
    const other = await servedWith({ ...options, loop: { busy: () => true } });
    for (let i = 0; i < 3; i++) await api(other.baseUrl).get('/auth').set('X-API-KEY', alone.key).expect(200);
  });

  it('refuses with 429 a request whose turn does not come in time', async () => {
    const { admission, baseUrl } = await servedWith({
      perCompany: 1,
      companyBytes: 8 << 20,
      processBytes: 32 << 20,
      maxWaiting: 8,
      waitMillis: 200,
    });
    const held = heldCreate(baseUrl, a.key);
    await until(() => admission.load(a.companyId).inFlight === 1, 'holding company A');
    const late = await api(baseUrl).get('/reports').set('X-API-KEY', a.key).expect(429);
    expect(late.body.error).to.match(/waited too long/);
    held.finish();
    expect((await held.answered).status).to.equal(200);
  });

  it("gives the share back when the caller leaves during the key check, before the share's 'close' is heard", async () => {
    const limits = testLimits(pool());
    const admission = new Admission({
      perCompany: 1,
      companyBytes: 8 << 20,
      processBytes: 32 << 20,
      maxWaiting: 8,
      waitMillis: 60_000,
    });
    const keyCheck = gate();
    let checking = false;
    const keys = databaseKeys(pool());
    const apiKeys = {
      authenticate: async (key: string) => {
        checking = true;
        await keyCheck.opened;
        return keys.authenticate(key);
      },
    };
    const server = await listen(newApp({ limits: { ...limits, admission }, apiKeys }).app, 0, '127.0.0.1');
    servers.push(server);
    const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const gone = http.get(`${baseUrl}/auth`, { headers: { 'X-API-KEY': a.key } });
    gone.on('error', () => undefined);
    await until(() => checking, 'checking the key');
    gone.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    keyCheck.open();
    await until(() => admission.load(a.companyId).inFlight === 0, 'the share given back');
    await api(baseUrl).get('/auth').set('X-API-KEY', a.key).expect(200);
  });

  it('bounds the bytes of bodies in flight per company and per process', async () => {
    const { admission, baseUrl } = await servedWith({ ...BYTE_SHARES, processBytes: (3 << 20) / 2 });
    // B at work too: A's own byte share applies.
    await api(baseUrl).get('/auth').set('X-API-KEY', b.key).expect(200);
    const big = JSON.stringify(reportInput({ notes: 'x'.repeat(90_000) }));
    const bodyOf = (n: number) => JSON.stringify(reportInput({ notes: 'x'.repeat(n) }));
    // A: 700 KB in flight; its second body of 700 KB would pass its 1 MiB: it waits.
    const a1 = heldCreate(baseUrl, a.key, bodyOf(99_000).padEnd(700_000, ' '));
    await until(() => admission.load(a.companyId).inFlight === 1, 'A’s first body in flight');
    await api(baseUrl).get('/auth').set('X-API-KEY', b.key).expect(200);
    const a2 = heldCreate(baseUrl, a.key, bodyOf(99_000).padEnd(700_000, ' '));
    await until(() => admission.load(a.companyId).waiting === 1, 'A’s second body waiting');
    // B's small body fits the process (700 KB + 100 KB < 1.5 MiB) and goes at once; A's GET needs no bytes
    // but waits behind A's own queue.
    const b1 = heldCreate(baseUrl, b.key, big);
    await until(() => admission.load(b.companyId).inFlight === 1, 'B’s body in flight');
    b1.finish();
    expect((await b1.answered).status).to.equal(200);
    expect(a2.settled(), 'A’s second body still waits').to.equal(false);
    a1.finish();
    expect((await a1.answered).status).to.equal(200);
    await until(() => admission.load(a.companyId).inFlight === 1, 'A’s second body admitted');
    a2.finish();
    expect((await a2.answered).status).to.equal(200);
  });

  it('lends a company alone LENT_BYTES times its byte share, not the whole process: another finds at most that much ahead', async () => {
    const company = await newCompany();
    const { admission, baseUrl } = await servedWith({ ...BYTE_SHARES, processBytes: 32 << 20 });
    // Bodies of 100 KB under the company's 1 MiB: LENT_BYTES of them fit in LENT_BYTES × 1 MiB, one more
    // waits though the process has room for it.
    const body = JSON.stringify(reportInput()).padEnd((1 << 20) - 100_000, ' ');
    const held = Array.from({ length: LENT_BYTES }, () => heldCreate(baseUrl, company.key, body));
    await until(() => admission.load(company.companyId).inFlight === LENT_BYTES, 'LENT_BYTES bodies in flight');
    // Sent once the others are in: the one that waits is this one, whatever order the others arrived in.
    held.push(heldCreate(baseUrl, company.key, body));
    await until(() => admission.load(company.companyId).waiting === 1, 'the last one waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(admission.load(company.companyId).inFlight, 'no more in flight').to.equal(LENT_BYTES);
    held[0]!.finish();
    expect((await held[0]!.answered).status).to.equal(200);
    await until(
      () => admission.load(company.companyId).waiting === 0,
      'the last one admitted in the first one’s place',
    );
    for (const request of held.slice(1)) request.finish();
    for (const request of held.slice(1)) expect((await request.answered).status).to.equal(200);
  });

  it('ends the waits of requests queued together at times of their own, each within waitMillis', async () => {
    // The first wait drawn is the whole of waitMillis, the second half of it.
    const draws = [0.999, 0];
    const { admission, baseUrl } = await servedWith({
      perCompany: 1,
      companyBytes: 8 << 20,
      processBytes: 32 << 20,
      maxWaiting: 8,
      waitMillis: 600,
      random: () => draws.shift() ?? 0,
    });
    const held = heldCreate(baseUrl, a.key);
    await until(() => admission.load(a.companyId).inFlight === 1, 'holding company A');
    const refusals: string[] = [];
    const sent = Date.now();
    const wait = (name: string) =>
      api(baseUrl)
        .get('/reports')
        .set('X-API-KEY', a.key)
        .then((res) => {
          refusals.push(name);
          return { res, after: Date.now() - sent };
        });
    const first = wait('first');
    await until(() => admission.load(a.companyId).waiting === 1, 'the first waiting');
    const second = wait('second');
    const [one, two] = await Promise.all([first, second]);
    for (const { res, after } of [one, two]) {
      expect(res.status).to.equal(429);
      expect(res.body.error).to.match(/waited too long/);
      expect(after, 'no wait ends before half of waitMillis').to.be.at.least(300);
    }
    expect(refusals, 'the later request, drawn the shorter wait, is refused first').to.deep.equal(['second', 'first']);
    held.finish();
    expect((await held.answered).status).to.equal(200);
  });

  it('counts the answer a request is expected to send: a company of large answers has fewer in flight', async () => {
    const company = await newCompany();
    const { admission, baseUrl } = await servedWith(BYTE_SHARES);
    await api(baseUrl).get('/auth').set('X-API-KEY', b.key).expect(200);
    const created = await api(baseUrl)
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      .send(reportInput({ notes: 'n'.repeat(100_000), address: 'a'.repeat(1_000) }))
      .expect(200);
    const id = (created.body as { id: string }).id;
    // About 100 KB an answer, learnt from the answers sent.
    for (let i = 0; i < 8; i++) await api(baseUrl).get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
    const body = JSON.stringify(reportInput()).padEnd(950_000, ' ');
    await api(baseUrl).get('/auth').set('X-API-KEY', b.key).expect(200); // B at work: the byte share applies
    const held = heldCreate(baseUrl, company.key, body);
    await until(() => admission.load(company.companyId).inFlight === 1, 'a 950 KB body in flight');
    // 950 KB in flight and about 100 KB expected: past the company's 1 MiB, the read waits.
    const read = api(baseUrl)
      .get(`/reports/${id}`)
      .set('X-API-KEY', company.key)
      .then((res) => res);
    await until(() => admission.load(company.companyId).waiting === 1, 'the read waiting');
    await api(baseUrl).get('/auth').set('X-API-KEY', b.key).expect(200);
    held.finish();
    expect((await held.answered).status).to.equal(200);
    expect((await read).status).to.equal(200);
  });

  /**
   * Runs `during` while B is at work and a 950 KB create of the company's is held in flight (its share
   * has about 100 KB left); then the create ends, and is written.
   */
  async function whileNearlyFull(
    { admission, baseUrl }: { admission: Admission; baseUrl: string },
    company: TestCompany,
    during: () => Promise<unknown>,
  ): Promise<void> {
    await api(baseUrl).get('/auth').set('X-API-KEY', b.key).expect(200);
    const held = heldCreate(baseUrl, company.key, JSON.stringify(reportInput()).padEnd(950_000, ' '));
    try {
      await until(() => admission.load(company.companyId).inFlight === 1, 'a 950 KB body in flight');
      await during();
    } finally {
      held.finish();
    }
    expect((await held.answered).status).to.equal(200);
  }

  it('counts a kind of read not yet seen from the company as the largest answer, until one is seen', async () => {
    const company = await newCompany();
    // No waiting: a request that does not fit now is refused at once.
    const served = await servedWith({ ...BYTE_SHARES, maxWaiting: 0 });
    const { baseUrl } = served;
    const created = await api(baseUrl).post('/reports/new').set('X-API-KEY', company.key).send(reportInput());
    const read = () =>
      api(baseUrl)
        .get(`/reports/${(created.body as { id: string }).id}`)
        .set('X-API-KEY', company.key);
    // Its first read might be a maximal report: it does not fit beside 950 KB.
    await whileNearlyFull(served, company, () => read().expect(429));
    // Once one was answered (a small report), the next ones fit.
    await read().expect(200);
    await whileNearlyFull(served, company, () => read().expect(200));
  });

  it("learns the size of a company's answers from those it sent, not from its refusals", async () => {
    const company = await newCompany();
    const served = await servedWith({ ...BYTE_SHARES, maxWaiting: 0 });
    const { baseUrl } = served;
    const created = await api(baseUrl)
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      .send(reportInput({ notes: 'n'.repeat(100_000), address: 'a'.repeat(1_000) }))
      .expect(200);
    const read = () =>
      api(baseUrl)
        .get(`/reports/${(created.body as { id: string }).id}`)
        .set('X-API-KEY', company.key);
    // About 100 KB an answer, learnt from the answers sent.
    for (let i = 0; i < 8; i++) await read().expect(200);
    // Refused: 100 KB does not fit beside 950 KB, and a refusal of a few bytes teaches nothing (one
    // counted would bring the estimate to 75 KB, and the next read would fit).
    await whileNearlyFull(served, company, async () => {
      for (let i = 0; i < 9; i++) await read().expect(429);
    });
  });
});

describe('EventLoopLoad', () => {
  it('is busy after the loop ran callbacks past its threshold, and not once it waited for I/O again', async () => {
    const load = new EventLoopLoad(0.5);
    load.busy();
    const until = performance.now() + 40;
    while (performance.now() < until); // the loop's thread busy for 40 ms
    expect(load.busy(), 'after 40 ms of callbacks').to.equal(true);
    // Waiting, it is no longer busy: looked at every 60 ms for up to 2 s, for this process may still run
    // other tests' callbacks (their servers and pools) in any one window of 60 ms.
    const deadline = performance.now() + 2_000;
    let busy = true;
    while (busy && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 60));
      busy = load.busy();
    }
    expect(busy, 'after waiting for I/O').to.equal(false);
  });
});

describe('Admission (fair turns)', () => {
  it('serves waiting companies in turn when the process’s bytes free up', async () => {
    const admission = new Admission({
      perCompany: 10,
      companyBytes: 100,
      processBytes: 100,
      maxWaiting: 10,
      waitMillis: 10_000,
    });
    const first = await admission.admit('x', 100);
    const order: string[] = [];
    const waiting = ['a', 'a', 'a', 'b', 'c'].map((company) =>
      admission.admit(company, 100).then((release) => {
        order.push(company);
        release();
      }),
    );
    first();
    await Promise.all(waiting);
    expect(order).to.deep.equal(['a', 'b', 'c', 'a', 'a']);
  });

  it('grants a waiting request only after the event loop has read its sockets again, never in the same turn', async () => {
    const admission = new Admission({
      perCompany: 1,
      companyBytes: 100,
      processBytes: 100,
      maxWaiting: 10,
      waitMillis: 10_000,
    });
    const release = await admission.admit('a', 0);
    let granted = false;
    const next = admission.admit('a', 0).then((end) => {
      granted = true;
      return end;
    });
    release();
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(granted, 'not within the turn that ended the first').to.equal(false);
    await new Promise((resolve) => setImmediate(resolve));
    (await next)();
    expect(granted).to.equal(true);
  });
});
