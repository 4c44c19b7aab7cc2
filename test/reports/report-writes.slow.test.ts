import { expect } from 'chai';
import type { Response } from 'supertest';
import fc from 'fast-check';
import { createApp } from '../../src/app.js';
import { createPool } from '../../src/db/pool.js';
import { ReportWriter } from '../../src/reports/write.js';
import { loadSchemaFaker, validReportBody, type Body } from '../contract/support/requests.js';
import {
  api,
  appDeps,
  databaseUrl,
  newCompany,
  pool,
  reportInput,
  unique,
  type TestCompany,
  testLimits,
} from '../support/harness.js';
import { holdReportRow, waitUntilBlocked } from '../support/locks.js';
import { reportRowsOf } from '../support/report-rows.js';
import { gatedDatabase } from '../support/gated-writes.js';
import { until } from '../support/wait.js';

/**
 * Creates and updates in batches (reports/write.ts, db/batcher.ts), through HTTP against the
 * test database: writes that arrive while a statement is in the database leave together, and each
 * still gets the answer it would get alone.
 */
describe('report writes in batches', () => {
  const INSPECTORS = [
    { name: 'Dana Inspector', email: 'dana@example.com' },
    { name: 'Lee Inspector', email: 'lee@example.com' },
  ];
  let company: TestCompany;
  before(async () => {
    company = await newCompany(INSPECTORS);
  });

  /**
   * An app whose writer runs one batch at a time on a gated database: `first` is sent and held in the
   * database, then each of `queued` is sent once the one before waits, then the gate opens. Answers
   * every response, in order.
   */
  async function sendBehindOne(first: Body, queued: Body[], key = company.key) {
    const { db, sizes, open } = gatedDatabase(pool());
    const writes = new ReportWriter(db, { batchesInFlight: 1 });
    const target = createApp(appDeps(pool(), { writes }));
    const send = (body: Body) =>
      api(target)
        .post('/reports/new')
        .set('X-API-KEY', key)
        .send(body)
        .then((r) => r);
    const held = send(first);
    await until(() => sizes.length === 1, 'holding the first write in the database');
    // One at a time into the queue: concurrent requests reach the writer in no set order.
    const rest = [];
    for (const body of queued) {
      rest.push(send(body));
      await until(() => writes.waiting === rest.length, `waiting with write ${rest.length}`);
    }
    open();
    return { responses: await Promise.all([held, ...rest]), sizes };
  }

  const stored = async (companyId: string, clientName: string) =>
    (
      await pool().query<{ client_names: string[]; inspector_emails: string[] }>(
        'SELECT client_names, inspector_emails FROM reports WHERE company_id = $1 AND $2 = ANY (client_names)',
        [companyId, clientName],
      )
    ).rows;

  it('gives each write of a batch its own answer: created, refused (400, 409) or merged in the order sent', async () => {
    const published = unique('published');
    const { body: p } = await api()
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      .send(reportInput({ restId: published }));
    await pool().query(`UPDATE reports SET status = 'published' WHERE company_id = $1 AND id = $2`, [
      company.companyId,
      p.id,
    ]);
    const twice = unique('twice');
    const marker = unique('client');
    const { responses, sizes } = await sendBehindOne(reportInput({ clientNames: `${marker} held` }), [
      reportInput({ clientNames: `${marker} 1`, inspectorEmails: 'dana@example.com' }),
      reportInput({ clientNames: `${marker} 2`, inspectorEmails: ['LEE@example.com', 'dana@example.com'] }),
      reportInput({ clientNames: `${marker} unknown`, inspectorEmails: ['dana@example.com', 'nobody@example.com'] }),
      reportInput({ restId: published, clientNames: `${marker} published` }),
      reportInput({ restId: twice, clientNames: `${marker} first` }),
      reportInput({ clientNames: `${marker} 3` }),
      reportInput({ restId: twice, clientNames: `${marker} second` }),
    ]);
    // The held write alone; then all the others, the two writes of one restId too, in one statement.
    expect(sizes).to.deep.equal([1, 7]);
    const [held, one, two, unknown, refused, first, three, second] = responses;
    for (const res of [held, one, two, first, three, second]) expect(res!.status).to.equal(200);
    expect(new Set([held, one, two, first, three].map((r) => r!.body.id)).size).to.equal(5);
    expect(second!.body.id).to.equal(first!.body.id);
    expect(unknown!.status).to.equal(400);
    expect(unknown!.body).to.deep.equal({ error: 'inspectorEmails are not users of this company: nobody@example.com' });
    expect(refused!.status).to.equal(409);
    expect(refused!.body.error).to.match(/is published/);

    expect(await stored(company.companyId, `${marker} 2`)).to.deep.equal([
      { client_names: [`${marker} 2`], inspector_emails: ['lee@example.com', 'dana@example.com'] },
    ]);
    expect(await stored(company.companyId, `${marker} unknown`)).to.deep.equal([]);
    expect(await stored(company.companyId, `${marker} published`)).to.deep.equal([]);
    expect(await stored(company.companyId, `${marker} first`)).to.deep.equal([]);
    const { body: merged } = await api().get(`/reports/${first!.body.id}`).set('X-API-KEY', company.key).expect(200);
    expect(merged.clientName).to.equal(`${marker} second`);
  });

  it('runs each write again alone when the database refuses the batch: only the write at fault fails', async () => {
    const refused = unique('refused');
    // A write the database refuses although the request is valid (here: a trigger of the test's own).
    await pool().query(`
      CREATE OR REPLACE FUNCTION test_refuse_report() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.rest_id = '${refused}' THEN RAISE EXCEPTION 'refused by the test'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_refuse_report BEFORE INSERT ON reports FOR EACH ROW EXECUTE FUNCTION test_refuse_report();`);
    try {
      const marker = unique('client');
      const { responses, sizes } = await sendBehindOne(reportInput({ clientNames: `${marker} held` }), [
        reportInput({ clientNames: `${marker} before` }),
        reportInput({ restId: refused, clientNames: `${marker} refused` }),
        reportInput({ clientNames: `${marker} after` }),
      ]);
      expect(sizes).to.deep.equal([1, 3, 1, 1, 1]);
      expect(responses.map((r) => r.status)).to.deep.equal([200, 200, 500, 200]);
      expect(responses[2]!.body).to.deep.equal({ error: 'internal server error' });
      expect(await stored(company.companyId, `${marker} before`)).to.have.length(1);
      expect(await stored(company.companyId, `${marker} after`)).to.have.length(1);
      expect(await stored(company.companyId, `${marker} refused`)).to.deep.equal([]);
    } finally {
      await pool().query('DROP TRIGGER test_refuse_report ON reports; DROP FUNCTION test_refuse_report()');
    }
  });

  it('takes rows in (company, restId) order: two processes updating the same reports in opposite orders never deadlock', async () => {
    const slow = unique('slow');
    const restIds = Array.from({ length: 5 }, (_, i) => `${slow}-${i}`);
    for (const restId of restIds) {
      await api().post('/reports/new').set('X-API-KEY', company.key).send(reportInput({ restId })).expect(200);
    }
    // Each of these rows takes 50 ms to update once locked, so two batches that took them in opposite
    // orders would each hold some while waiting for the other's: a deadlock, one batch refused.
    await pool().query(`
      CREATE OR REPLACE FUNCTION test_slow_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.rest_id LIKE '${slow}-%' THEN PERFORM pg_sleep(0.05); END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_slow_update BEFORE UPDATE ON reports FOR EACH ROW EXECUTE FUNCTION test_slow_update();`);
    try {
      const marker = unique('client');
      const [one, two] = await Promise.all([
        sendBehindOne(
          reportInput({ clientNames: `${marker} held 1` }),
          restIds.map((restId) => reportInput({ restId, clientNames: `${marker} one` })),
        ),
        sendBehindOne(
          reportInput({ clientNames: `${marker} held 2` }),
          [...restIds].reverse().map((restId) => reportInput({ restId, clientNames: `${marker} two` })),
        ),
      ]);
      for (const { responses } of [one, two]) expect(responses.map((r) => r.status)).to.deep.equal(Array(6).fill(200));
      // One batch of five each, none refused and run again alone.
      expect(one.sizes).to.deep.equal([1, 5]);
      expect(two.sizes).to.deep.equal([1, 5]);
    } finally {
      await pool().query('DROP TRIGGER test_slow_update ON reports; DROP FUNCTION test_slow_update()');
    }
  });

  it('answers 503 to a write that waits for its turn past the wait budget, and writes nothing of it', async () => {
    const restId = unique('held');
    await api().post('/reports/new').set('X-API-KEY', company.key).send(reportInput({ restId })).expect(200);
    const writes = new ReportWriter(pool(), { batchesInFlight: 1, waitMillis: 300 });
    const target = createApp(appDeps(pool(), { writes }));
    const marker = unique('client');
    const locker = await holdReportRow(pool(), company.companyId, restId);
    let update;
    try {
      // The one batch in flight waits on the row lock: the create behind it cannot have its turn.
      update = api(target)
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ restId }))
        .then((r) => r);
      expect(await waitUntilBlocked(pool(), locker)).to.equal(true);
      const late = await api(target)
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ clientNames: marker }))
        .expect(503);
      expect(late.body).to.deep.equal({ error: 'database unavailable' });
      expect(late.headers['retry-after']).to.match(/^\d+$/);
    } finally {
      await locker.query('COMMIT');
      locker.release();
    }
    expect((await update).status).to.equal(200);
    expect(await stored(company.companyId, marker)).to.deep.equal([]);
  });

  it('writes in a batch what the same writes write one at a time (generated bodies, shared restIds)', async function () {
    this.timeout(120_000);
    await loadSchemaFaker();
    const emails = INSPECTORS.map((i) => i.email);
    const restIds = [unique('rest'), unique('rest')];
    const alone = await newCompany(INSPECTORS);
    const batched = await newCompany(INSPECTORS);
    await fc.assert(
      fc.asyncProperty(
        fc.array(validReportBody({ inspectorEmails: emails }, restIds), { minLength: 2, maxLength: 8 }),
        async (bodies) => {
          const one: number[] = [];
          for (const body of bodies) {
            one.push((await api().post('/reports/new').set('X-API-KEY', alone.key).send(body)).status);
          }
          const [first, ...rest] = bodies;
          const { responses } = await sendBehindOne(first!, rest, batched.key);
          expect(responses.map((r) => r.status)).to.deep.equal(one);
          expect(await reportRowsOf(batched.companyId)).to.deep.equal(await reportRowsOf(alone.companyId));
        },
      ),
      { numRuns: 20, endOnFailure: true },
    );
  });
});

/**
 * Companies' writes apart (in this file: its tests hold row locks, which would stall the triggers
 * created above if the two ran at once in parallel workers) (reports/write.ts, db/batcher.ts), through HTTP against the test
 * database: one company's write waiting on a row lock, or cut off by the statement timeout, neither
 * holds back nor fails another company's writes, and a company with a deep queue takes turns.
 */
describe('report writes: each company apart', () => {
  let a: TestCompany;
  let b: TestCompany;
  before(async () => {
    [a, b] = await Promise.all([newCompany(), newCompany()]);
  });

  const send = (target: Parameters<typeof api>[0], company: TestCompany, body: object) =>
    api(target)
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      .send(body)
      .then((r) => r);

  const created = async (restId: string) =>
    (await api().post('/reports/new').set('X-API-KEY', a.key).send(reportInput({ restId })).expect(200)).body as {
      id: string;
    };

  const notesOf = async (id: string) =>
    (await pool().query<{ notes: string }>('SELECT notes FROM reports WHERE id = $1', [id])).rows[0]!.notes;

  it("answers another company's creates while one company's update waits on a row lock", async () => {
    const restId = unique('locked');
    const report = await created(restId);
    // The writer a server has: its default number of batches in flight, from the pool's size.
    const writes = new ReportWriter(pool());
    const target = createApp(appDeps(pool(), { writes }));
    const locker = await holdReportRow(pool(), a.companyId, restId);
    let update: Promise<Response> | undefined;
    let next: Promise<Response> | undefined;
    let updated = false;
    try {
      update = send(target, a, reportInput({ restId, notes: 'changed' })).finally(() => (updated = true));
      expect(await waitUntilBlocked(pool(), locker)).to.equal(true);
      // A's next write waits its company's turn, behind the update.
      next = send(target, a, reportInput());
      await until(() => writes.waiting === 1, "queuing A's next write");
      const answers = await Promise.all([1, 2, 3].map(() => send(target, b, reportInput())));
      expect(answers.map((r) => r.status)).to.deep.equal([200, 200, 200]);
      // B was answered while A's update still waits on the lock, and A's next write behind it.
      expect(updated).to.equal(false);
      expect(writes.waiting).to.equal(1);
    } finally {
      await locker.query('COMMIT');
      locker.release();
    }
    expect((await update).status).to.equal(200);
    expect((await next).status).to.equal(200);
    expect(await notesOf(report.id)).to.equal('changed');
  });

  it("fails only the write whose row is locked when its batch hits the statement timeout: its batch-mate and another company's writes succeed", async () => {
    const restId = unique('locked');
    const report = await created(restId);
    const short = createPool({
      connectionString: databaseUrl(),
      connectionTimeoutMillis: 3000,
      statementTimeoutMillis: 300,
    });
    try {
      const { db, sizes, open } = gatedDatabase(short);
      const writes = new ReportWriter(db, { batchesInFlight: 4, waitMillis: 3000 });
      const target = createApp(appDeps(short, { writes }));
      const locker = await holdReportRow(pool(), a.companyId, restId);
      try {
        // A's first write is held at the gate, so A's next two wait and leave together, as one batch.
        const held = send(target, a, reportInput());
        await until(() => sizes.length === 1, "holding A's first write");
        const locked = send(target, a, reportInput({ restId, notes: 'changed' }));
        await until(() => writes.waiting === 1, "queuing A's update of the locked report");
        const mate = send(target, a, reportInput({ clientNames: unique('mate') }));
        await until(() => writes.waiting === 2, "queuing A's create behind it");
        const others = [send(target, b, reportInput()), send(target, b, reportInput())];
        // B's first write is held at the gate too, its second waits behind it.
        await until(() => sizes.length === 2 && writes.waiting === 3, "B's writes in the database and queued");
        open();
        const [lockedRes, mateRes] = await Promise.all([locked, mate]);
        expect(lockedRes.status).to.equal(503);
        expect(lockedRes.body).to.deep.equal({ error: 'database unavailable' });
        expect(lockedRes.headers['retry-after']).to.match(/^\d+$/);
        expect(mateRes.status).to.equal(200);
        expect((await held).status).to.equal(200);
        expect((await Promise.all(others)).map((r) => r.status)).to.deep.equal([200, 200]);
        // The update and its batch-mate left together, then each again alone.
        expect(sizes.filter((n) => n === 2)).to.have.length(1);
      } finally {
        await locker.query('COMMIT');
        locker.release();
      }
    } finally {
      await short.end();
    }
    expect(await notesOf(report.id)).to.equal('');
  });

  it('takes companies in turns: a deep queue of one company leaves its batch and waits behind another that waited', async () => {
    const c = await newCompany();
    const { db, sizes, open } = gatedDatabase(pool());
    // One batch in flight: every company waits for the same slot.
    const writes = new ReportWriter(db, { batchesInFlight: 1 });
    // A's 40 writes in flight at once: a share of the process that holds them all.
    const target = createApp(appDeps(pool(), { writes, limits: testLimits(pool(), { perCompany: 64 }) }));
    const held = send(target, c, reportInput());
    await until(() => sizes.length === 1, "holding C's write");
    const queued = [];
    for (let i = 0; i < 40; i++) {
      queued.push(send(target, a, reportInput()));
      await until(() => writes.waiting === queued.length, `queuing A's write ${i + 1}`);
    }
    queued.push(send(target, b, reportInput()));
    await until(() => writes.waiting === queued.length, "queuing B's write");
    open();
    const answers = await Promise.all([held, ...queued]);
    expect(answers.map((r) => r.status)).to.deep.equal(Array(42).fill(200));
    // C's write; A's first 32 (a full batch); then B, who waited meanwhile; then the rest of A's.
    expect(sizes).to.deep.equal([1, 32, 1, 8]);
  });
});
