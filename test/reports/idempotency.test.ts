import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import pg from 'pg';
import { fingerprint } from '../../src/reports/idempotency.js';
import { ReportWriter } from '../../src/reports/write.js';
import { gatedDatabase } from '../support/gated-writes.js';
import {
  api,
  databaseUrl,
  newApp,
  newCompany,
  pool,
  reportInput,
  unique,
  type TestCompany,
} from '../support/harness.js';

/** Idempotency-Key on POST /reports/new (draft-ietf-httpapi-idempotency-key-header), through HTTP. */

const create = (company: TestCompany, body: object, key?: string, target = api()) => {
  const req = target.post('/reports/new').set('X-API-KEY', company.key);
  return (key === undefined ? req : req.set('Idempotency-Key', key)).send(body);
};

/** Waits until `condition()` resolves true, checking every 20 ms (at most 10 s). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 10_000; !(await condition()); await sleep(20)) {
    if (Date.now() > deadline) throw new Error('the condition did not hold within 10 s');
  }
}

/**
 * Another server's request with this key, between its statement and its commit: the key stored with its
 * answer (a report id of its own), not yet committed. waitedFor(): until a statement waits for its commit.
 */
async function keyBeingStored(company: TestCompany, key: string, body: object) {
  const other = new pg.Client({ connectionString: databaseUrl() });
  await other.connect();
  await other.query('BEGIN');
  const { rows } = await other.query<{ answer: string; pid: number }>(
    `INSERT INTO idempotency_keys (company_id, key, fingerprint, status, answer, expires_at)
     VALUES ($1, $2, $3, 200, gen_random_uuid()::text, clock_timestamp() + interval '1 day')
     RETURNING answer, pg_backend_pid() AS pid`,
    [company.companyId, key, fingerprint(body)],
  );
  const { answer, pid } = rows[0]!;
  return {
    answer,
    waitedFor: () =>
      until(async () => {
        const blocked = await pool().query('SELECT FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid]);
        return blocked.rowCount === 1;
      }),
    commit: () => other.query('COMMIT'),
    end: () => other.end(),
  };
}

async function reportCount(companyId: string): Promise<number> {
  const { rows } = await pool().query<{ n: number }>('SELECT count(*)::int AS n FROM reports WHERE company_id = $1', [
    companyId,
  ]);
  return rows[0]!.n;
}

describe('POST /reports/new with an Idempotency-Key', () => {
  it('answers a retry with the same key and body byte for byte, and writes nothing more', async () => {
    const company = await newCompany();
    const key = unique('key');
    const first = await create(company, reportInput({ notes: 'first' }), key).expect(200);
    // The same body laid out otherwise (keys in another order) is the same body.
    const again = await create(company, { notes: 'first', ...reportInput() }, key).expect(200);
    expect(again.text).to.equal(first.text);
    expect(await reportCount(company.companyId)).to.equal(1);
    // Without the key, the same body makes another report, as before.
    await create(company, reportInput({ notes: 'first' })).expect(200);
    expect(await reportCount(company.companyId)).to.equal(2);
  });

  it("takes the draft's string form and the bare form as the same key", async () => {
    const company = await newCompany();
    const key = unique('key');
    const first = await create(company, reportInput(), `"${key}"`).expect(200);
    const again = await create(company, reportInput(), key).expect(200);
    expect(again.body).to.deep.equal(first.body);
    expect(await reportCount(company.companyId)).to.equal(1);
  });

  it('answers 422 to the same key with another body, and changes nothing', async () => {
    const company = await newCompany();
    const key = unique('key');
    const { body } = await create(company, reportInput({ notes: 'one' }), key).expect(200);
    const refused = await create(company, reportInput({ notes: 'two' }), key).expect(422);
    expect(refused.body.error).to.match(/different body/);
    const { body: report } = await api().get(`/reports/${body.id}`).set('X-API-KEY', company.key).expect(200);
    expect(report.inspectorNotes).to.equal('one');
    expect(await reportCount(company.companyId)).to.equal(1);
  });

  it('keeps the refusal the first request got (400, 409) and answers it again', async () => {
    const company = await newCompany([{ name: 'Dana', email: 'dana@example.com' }]);
    const key = unique('key');
    const input = reportInput({ inspectorEmails: ['lee@example.com'] });
    const first = await create(company, input, key).expect(400);
    // The inspector exists now, but the key's answer is the one given.
    await pool().query("INSERT INTO users (company_id, name, email) VALUES ($1, 'Lee', 'lee@example.com')", [
      company.companyId,
    ]);
    const again = await create(company, input, key).expect(400);
    expect(again.text).to.equal(first.text);
    expect(await reportCount(company.companyId)).to.equal(0);
  });

  it('keeps keys per company: the same key of two companies makes a report in each', async () => {
    const [a, b] = [await newCompany(), await newCompany()];
    const key = unique('key');
    const ofA = await create(a, reportInput(), key).expect(200);
    const ofB = await create(b, reportInput({ notes: 'another body' }), key).expect(200);
    expect(ofB.body.id).to.not.equal(ofA.body.id);
    expect(await reportCount(a.companyId)).to.equal(1);
    expect(await reportCount(b.companyId)).to.equal(1);
  });

  it('refuses a key longer than 255 characters or with a quote inside (400), takes one of 255', async () => {
    const company = await newCompany();
    const long = await create(company, reportInput(), 'k'.repeat(256)).expect(400);
    expect(long.body.error).to.match(/^idempotency-key must be 1 to 255/);
    await create(company, reportInput(), 'a"b').expect(400);
    await create(company, reportInput(), `"${'k'.repeat(256)}"`).expect(400);
    await create(company, reportInput(), `${unique('k')}${'k'.repeat(200)}`.slice(0, 255)).expect(200);
    expect(await reportCount(company.companyId)).to.equal(1);
  });

  it('refuses the header sent twice (400), never reading the two as one key joined with a comma', async () => {
    const company = await newCompany();
    const key = unique('order');
    const first = await create(company, reportInput(), key).expect(200);
    const twice = await api()
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      // Two header lines (Node's setHeader with an array), which superagent's types allow only for Cookie.
      .set('Idempotency-Key', [key, key] as unknown as string)
      .send(reportInput());
    expect(twice.status).to.equal(400);
    expect(twice.body).to.deep.equal({ error: 'Idempotency-Key must be sent once: this request has it 2 times' });
    // One line holding a comma is one key, as sent.
    const joined = await create(company, reportInput(), `${key}, ${key}`).expect(200);
    expect(joined.body.id).to.not.equal(first.body.id);
    expect(await reportCount(company.companyId)).to.equal(2);
  });

  it('gives the key a new life after 24 hours: the same key then makes a new report', async () => {
    const company = await newCompany();
    const key = unique('key');
    const first = await create(company, reportInput(), key).expect(200);
    await pool().query(
      "UPDATE idempotency_keys SET expires_at = clock_timestamp() - interval '1 second' WHERE company_id = $1",
      [company.companyId],
    );
    const later = await create(company, reportInput({ notes: 'another body' }), key).expect(200);
    expect(later.body.id).to.not.equal(first.body.id);
    expect(await reportCount(company.companyId)).to.equal(2);
  });

  it('keeps restId its meaning: a key and a restId update the one report, a retry changes nothing', async () => {
    const company = await newCompany();
    const restId = unique('rest');
    const created = await create(company, reportInput({ restId, notes: 'v1' })).expect(200);
    const key = unique('key');
    const updated = await create(company, reportInput({ restId, notes: 'v2' }), key).expect(200);
    expect(updated.body.id).to.equal(created.body.id);
    await create(company, reportInput({ restId, notes: 'v3' })).expect(200);
    // The retry of the v2 update answers again and does not write v2 over v3.
    await create(company, reportInput({ restId, notes: 'v2' }), key).expect(200);
    const { body } = await api().get(`/reports/${created.body.id}`).set('X-API-KEY', company.key).expect(200);
    expect(body.inspectorNotes).to.equal('v3');
  });

  it('answers 409 to a retry while the first request is still in flight, then the first answer', async () => {
    const company = await newCompany();
    const gated = gatedDatabase(pool());
    const { app } = newApp({ writes: new ReportWriter(gated.db) });
    const key = unique('key');
    const first = create(company, reportInput(), key, api(app)).then((res) => res);
    while (gated.sizes.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const inFlight = await create(company, reportInput(), key, api(app)).expect(409);
    expect(inFlight.body.error).to.match(/still in flight/);
    gated.open();
    const answered = await first;
    expect(answered.status).to.equal(200);
    const again = await create(company, reportInput(), key, api(app)).expect(200);
    expect(again.text).to.equal(answered.text);
    expect(await reportCount(company.companyId)).to.equal(1);
  });

  it("keeps each answer of one report's writes folded into one statement, a refused one apart", async () => {
    const company = await newCompany([{ name: 'Dana', email: 'dana@example.com' }]);
    const gated = gatedDatabase(pool());
    const { app } = newApp({ writes: new ReportWriter(gated.db) });
    const restId = unique('crm');
    // The first write holds the company's turn; the three behind it wait together for one batch.
    const first = create(company, reportInput({ restId, notes: 'v1' }), unique('key'), api(app)).then((r) => r);
    while (gated.sizes.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const [k2, k3, k4] = [unique('key'), unique('key'), unique('key')];
    const second = create(company, reportInput({ restId, notes: 'v2' }), k2, api(app)).then((r) => r);
    const refused = create(company, reportInput({ restId, inspectorEmails: 'nobody@example.com' }), k3, api(app)).then(
      (r) => r,
    );
    const third = create(company, reportInput({ restId, notes: 'v3' }), k4, api(app)).then((r) => r);
    // Time for the three to reach the writer on a busy machine (a slower server's suites run beside this one).
    await new Promise((resolve) => setTimeout(resolve, 500));
    gated.open();
    const answers = await Promise.all([first, second, refused, third]);
    expect(answers.map((r) => r.status)).to.deep.equal([200, 200, 400, 200]);
    expect(gated.sizes).to.deep.equal([1, 3]);
    const id = answers[0]!.body.id;
    expect(answers[1]!.body.id).to.equal(id);
    expect(answers[3]!.body.id).to.equal(id);
    // Each key answers again what its own write answered.
    for (const [key, body, answer] of [
      [k2, reportInput({ restId, notes: 'v2' }), answers[1]!],
      [k3, reportInput({ restId, inspectorEmails: 'nobody@example.com' }), answers[2]!],
      [k4, reportInput({ restId, notes: 'v3' }), answers[3]!],
    ] as const) {
      const again = await create(company, body, key, api(app));
      expect([again.status, again.text]).to.deep.equal([answer.status, answer.text]);
    }
    const { body: report } = await api().get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
    expect(report.inspectorNotes).to.equal('v3');
  });

  it("answers a create whose key another server's request stored while it waited with that answer, writing nothing", async () => {
    const company = await newCompany();
    const key = unique('key');
    const body = reportInput();
    const other = await keyBeingStored(company, key, body);
    try {
      const waiting = create(company, body, key).then((res) => res);
      await other.waitedFor();
      await other.commit();
      const answered = await waiting;
      expect([answered.status, answered.body.id]).to.deep.equal([200, other.answer]);
      expect(await reportCount(company.companyId)).to.equal(0);
    } finally {
      await other.end();
    }
  });

  it('runs the batch of such a create again write by write: the key answers, the other write is written once', async () => {
    const company = await newCompany();
    const gated = gatedDatabase(pool());
    const writer = new ReportWriter(gated.db);
    const { app } = newApp({ writes: writer });
    const key = unique('key');
    const body = reportInput();
    const other = await keyBeingStored(company, key, body);
    try {
      // The first write holds the company's turn; the keyed create and one without a key wait for one batch.
      const first = create(company, reportInput(), undefined, api(app)).then((res) => res);
      while (gated.sizes.length === 0) await sleep(10);
      const keyed = create(company, body, key, api(app)).then((res) => res);
      const plain = create(company, reportInput({ notes: 'plain' }), undefined, api(app)).then((res) => res);
      await until(async () => writer.waiting === 2);
      gated.open();
      await other.waitedFor();
      await other.commit();
      const answers = await Promise.all([first, keyed, plain]);
      expect(answers.map((res) => res.status)).to.deep.equal([200, 200, 200]);
      expect(answers[1]!.body.id).to.equal(other.answer);
      // The batch of two failed (the key stored meanwhile), then each of its writes ran alone.
      expect(gated.sizes).to.deep.equal([1, 2, 1, 1]);
      expect(await reportCount(company.companyId)).to.equal(2);
    } finally {
      await other.end();
    }
  });

  it('keeps no key for a create that failed in the database (its key and report roll back together): a retry writes', async () => {
    const company = await newCompany();
    const key = unique('key');
    // A failure at the end of the write's statement, its report and key inserted (as a statement timeout
    // would be): a trigger on the keys (only this file's tests write keys), not on the reports every test writes.
    const fail = `fail_keys_of_${company.companyId.replaceAll('-', '_')}`;
    await pool().query(`
      CREATE FUNCTION ${fail}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'canceling statement due to statement timeout' USING ERRCODE = 'query_canceled';
      END $$;
      CREATE TRIGGER ${fail} AFTER INSERT ON idempotency_keys
        FOR EACH ROW WHEN (NEW.company_id = '${company.companyId}' AND NEW.status = 200) EXECUTE FUNCTION ${fail}()`);
    try {
      await create(company, reportInput(), key).expect(503);
    } finally {
      await pool().query(`DROP TRIGGER ${fail} ON idempotency_keys; DROP FUNCTION ${fail}()`);
    }
    const { rows } = await pool().query('SELECT key FROM idempotency_keys WHERE company_id = $1', [company.companyId]);
    expect(rows).to.deep.equal([]);
    expect(await reportCount(company.companyId)).to.equal(0);
    const retry = await create(company, reportInput(), key).expect(200);
    expect(await reportCount(company.companyId)).to.equal(1);
    const again = await create(company, reportInput(), key).expect(200);
    expect(again.text).to.equal(retry.text);
  });
});
