import { expect } from 'chai';
import { api, newCompany, pool } from '../support/harness.js';
import type { ReceivedWebhook } from '../support/https-receiver.js';
import {
  apiReport,
  auth,
  companyWithWebhook,
  signatures,
  verifies,
  webhookSuite,
  type CompanyWithWebhook,
} from '../support/webhooks.js';

describe('webhook secret rotation (POST /internal/companies/{companyId}/webhook/secret)', () => {
  const suite = webhookSuite();

  const rotate = (companyId: string) => api().post(`/internal/companies/${companyId}/webhook/secret`).set(auth);
  const integration = async (companyId: string) =>
    (await api().get(`/internal/companies/${companyId}/integration`).set(auth).expect(200)).body;

  /** A test delivery and a real publish, as the receiver got them. */
  async function deliverBoth(company: CompanyWithWebhook): Promise<ReceivedWebhook[]> {
    const before = suite.receiver.at(company.path).length;
    await api(suite.allowed.app).post(`/internal/companies/${company.companyId}/webhook/test`).set(auth).expect(200);
    const reportId = await apiReport(company.key);
    await api(suite.allowed.app)
      .post(`/internal/companies/${company.companyId}/reports/${reportId}/publish`)
      .set(auth)
      .send({ publishedUrl: 'https://reports.example.com/r/1', notifyIntegration: true })
      .expect(200);
    const requests = suite.receiver.at(company.path).slice(before);
    expect(requests.map((r) => r.headers['webhook-test'] ?? 'publish')).to.deep.equal(['true', 'publish']);
    return requests;
  }

  /** Whether each secret verifies each request (rows: requests, columns: secrets). */
  const verification = (requests: ReceivedWebhook[], secrets: string[]) =>
    requests.map((request) => secrets.map((secret) => verifies(request, secret)));

  /** The database's clock in milliseconds: the overlap is measured on it. */
  const databaseNow = async () =>
    Date.parse((await pool().query<{ now: Date }>('SELECT now()')).rows[0]!.now.toISOString());

  it('with an overlap, signs every delivery with both secrets, the new one first, until the expiry it announces', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const start = await databaseNow();
    const res = await rotate(company.companyId).send({ overlapSeconds: 3600 }).expect(200);
    const end = await databaseNow();
    const { secret, previousSecretExpiresAt } = res.body as { secret: string; previousSecretExpiresAt: string };
    expect(secret)
      .to.match(/^whsec_[A-Za-z0-9+/]{43}=$/)
      .and.not.equal(company.secret);
    expect(Date.parse(previousSecretExpiresAt)).to.be.within(start + 3_600_000, end + 3_600_000);
    expect(await integration(company.companyId)).to.include({ secret, previousSecretExpiresAt });

    const requests = await deliverBoth(company);
    expect(verification(requests, [secret, company.secret])).to.deep.equal([
      [true, true],
      [true, true],
    ]);
    for (const request of requests) {
      expect(signatures(request)).to.have.length(2);
      // The first signature alone is the new secret's.
      const first = { ...request, headers: { ...request.headers, 'webhook-signature': signatures(request)[0] } };
      expect([verifies(first, secret), verifies(first, company.secret)]).to.deep.equal([true, false]);
    }
  });

  it('keeps the previous secret for a day when no overlap is given, with or without a body', async () => {
    for (const body of [{}, undefined]) {
      const company = await companyWithWebhook(suite.receiver);
      const start = await databaseNow();
      const request = rotate(company.companyId);
      const res = await (body === undefined ? request : request.send(body)).expect(200);
      expect(Date.parse(res.body.previousSecretExpiresAt)).to.be.within(
        start + 86_400_000,
        (await databaseNow()) + 86_400_000,
      );
    }
  });

  it('with overlap 0, only the newest secret verifies', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const res = await rotate(company.companyId).send({ overlapSeconds: 0 }).expect(200);
    expect(res.body).to.deep.equal({ secret: res.body.secret, previousSecretExpiresAt: null });
    expect(await integration(company.companyId)).to.include({ secret: res.body.secret, previousSecretExpiresAt: null });
    const requests = await deliverBoth(company);
    expect(verification(requests, [res.body.secret, company.secret])).to.deep.equal([
      [true, false],
      [true, false],
    ]);
    expect(requests.map((r) => signatures(r).length)).to.deep.equal([1, 1]);
  });

  it('stops signing with the previous secret once the overlap has passed on the database clock', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const res = await rotate(company.companyId).send({ overlapSeconds: 1 }).expect(200);
    const expiry = Date.parse(res.body.previousSecretExpiresAt);
    for (let i = 0; i < 100 && (await databaseNow()) <= expiry; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await databaseNow()).to.be.above(expiry);

    expect((await integration(company.companyId)).previousSecretExpiresAt).to.equal(null);
    const requests = await deliverBoth(company);
    expect(verification(requests, [res.body.secret, company.secret])).to.deep.equal([
      [true, false],
      [true, false],
    ]);
  });

  it('ends the older secret at once when rotating during an overlap: only the newest two sign', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const second = (await rotate(company.companyId).send({ overlapSeconds: 3600 }).expect(200)).body.secret as string;
    const third = (await rotate(company.companyId).send({ overlapSeconds: 3600 }).expect(200)).body.secret as string;
    const requests = await deliverBoth(company);
    expect(verification(requests, [third, second, company.secret])).to.deep.equal([
      [true, true, false],
      [true, true, false],
    ]);
  });

  it('serialises concurrent rotations: the later keeps the earlier one as its previous secret', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const rotated = await Promise.all([1, 2].map(() => rotate(company.companyId).send({ overlapSeconds: 3600 })));
    const secrets = rotated.map((r) => r.body.secret as string);
    expect((await integration(company.companyId)).secret).to.be.oneOf(secrets);
    const requests = await deliverBoth(company);
    expect(verification(requests, [...secrets, company.secret])).to.deep.equal([
      [true, true, false],
      [true, true, false],
    ]);
  });

  it('setting an address again replaces every secret at once, with no overlap', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const rotated = (await rotate(company.companyId).send({ overlapSeconds: 3600 }).expect(200)).body.secret as string;
    const reset = await api()
      .put(`/internal/companies/${company.companyId}/webhook`)
      .set(auth)
      .send({ url: suite.receiver.url(company.path) })
      .expect(200);
    expect(await integration(company.companyId)).to.include({
      secret: reset.body.secret,
      previousSecretExpiresAt: null,
    });
    const requests = await deliverBoth(company);
    expect(verification(requests, [reset.body.secret, rotated, company.secret])).to.deep.equal([
      [true, false, false],
      [true, false, false],
    ]);
  });

  it('answers 409 without a webhook address: none set, a key only, or after a revocation', async () => {
    const error = { error: 'no webhook address is set for the company: set one first' };
    const withoutIntegration = await api().post('/internal/companies').set(auth).send({ name: 'No hook' }).expect(201);
    await rotate(withoutIntegration.body.id).send({}).expect(409, error);
    const keyOnly = await newCompany();
    await rotate(keyOnly.companyId).send({ overlapSeconds: 60 }).expect(409, error);
    const revoked = await companyWithWebhook(suite.receiver);
    await api().delete(`/internal/companies/${revoked.companyId}/integration`).set(auth).expect(204);
    await rotate(revoked.companyId).expect(409, error);
    for (const companyId of [withoutIntegration.body.id, keyOnly.companyId, revoked.companyId])
      expect(await integration(companyId)).to.include({ secret: null, previousSecretExpiresAt: null });
  });

  it('answers 400 naming the field for any other body, changing nothing', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const cases: Array<[unknown, string]> = [
      [{ overlapSeconds: -1 }, 'overlapSeconds must be >= 0'],
      [{ overlapSeconds: 604_801 }, 'overlapSeconds must be <= 604800'],
      [{ overlapSeconds: 1.5 }, 'overlapSeconds must be integer'],
      [{ overlapSeconds: '60' }, 'overlapSeconds must be integer'],
      [{ overlapSeconds: null }, 'overlapSeconds must be integer'],
      [{ overlap: 60 }, 'unknown field: overlap'],
      [[60], 'the body must be a JSON object'],
    ];
    for (const [body, error] of cases) {
      const res = await rotate(company.companyId)
        .send(body as object)
        .expect(400);
      expect(res.body, JSON.stringify(body)).to.deep.equal({ error });
    }
    expect(await integration(company.companyId)).to.include({ secret: company.secret, previousSecretExpiresAt: null });
    // The bounds themselves are accepted.
    await rotate(company.companyId).send({ overlapSeconds: 604_800 }).expect(200);
  });
});
