import { expect } from 'chai';
import type { Express } from 'express';
import { Webhook } from 'standardwebhooks';
import type { Pool } from '../../src/db/pool.js';
import { OUTCOME_NOT_RECORDED } from '../../src/integrations/webhooks/deliveries.js';
import { freePort } from '../../src/local/index.js';
import { APP_TOKEN, api, newApp, newCompany, reportInput, unique, type TestCompany } from '../support/harness.js';
import { webhookSuite } from '../support/webhooks.js';
import { gate, until } from '../support/wait.js';

const auth = { Authorization: `Bearer ${APP_TOKEN}` };

describe('publishing and the reportPublished webhook', () => {
  const suite = webhookSuite();
  /** Trusts the receiver's certificate, but without an allow-list (production defaults). */
  let guarded: { app: Express; pool: Pool };
  /** Allowed, with a short WEBHOOK_TIMEOUT_MS. */
  let impatient: { app: Express; pool: Pool };

  before(() => {
    guarded = newApp({ notifier: suite.receiver.notifier({ allowedCidrs: [] }) });
    impatient = newApp({ notifier: suite.receiver.notifier({ timeoutMs: 300 }) });
  });

  after(async () => {
    await Promise.all([guarded.pool.end(), impatient.pool.end()]);
  });

  /** A company with a key and a webhook address on the receiver at a path of its own. */
  async function companyWithWebhook(url?: string): Promise<TestCompany & { path: string; secret: string }> {
    const company = await newCompany();
    const path = `/${unique('hook')}`;
    const res = await api()
      .put(`/internal/companies/${company.companyId}/webhook`)
      .set(auth)
      .send({ url: url ?? suite.receiver.url(path) })
      .expect(200);
    return { ...company, path, secret: res.body.secret };
  }

  async function apiReport(key: string, overrides: Record<string, unknown> = {}): Promise<string> {
    const res = await api()
      .post('/reports/new')
      .set('X-API-KEY', key)
      .send(reportInput({ restId: unique('crm'), ...overrides }))
      .expect(200);
    return res.body.id;
  }

  const publish = (target: Express, companyId: string, reportId: string, body: Record<string, unknown>) =>
    api(target).post(`/internal/companies/${companyId}/reports/${reportId}/publish`).set(auth).send(body);

  /** The inspector's publish of a report through the application, to `url`, notifying unless told not to. */
  const publishTo = (company: { companyId: string }, id: string, url: string, notifyIntegration = true) =>
    publish(suite.allowed.app, company.companyId, id, { publishedUrl: url, notifyIntegration });

  const deliveries = async (companyId: string) =>
    (await api().get(`/internal/companies/${companyId}/webhook-deliveries`).set(auth).expect(200)).body as Array<
      Record<string, unknown>
    >;

  describe('when the webhook is due', () => {
    it('delivers the published report, signed so that standardwebhooks verifies it, and publishes', async () => {
      const company = await companyWithWebhook();
      const id = await apiReport(company.key, { address: '12 Elm Street', fromRestService: 'Acme CRM' });
      const res = await publishTo(company, id, 'https://reports.example.com/r/1').expect(200);
      const webhookId = suite.receiver.at(company.path)[0]!.headers['webhook-id'];
      expect(res.body.webhook).to.deep.equal({
        outcome: 'sent',
        eventId: webhookId,
        deliveryId: res.body.webhook.deliveryId,
        status: 204,
      });
      expect(res.body.report).to.include({ id, status: 'published', publishedUrl: 'https://reports.example.com/r/1' });

      const [request, ...more] = suite.receiver.at(company.path);
      expect(more).to.have.length(0);
      expect(request!.headers['content-type']).to.equal('application/json');
      const verified = new Webhook(company.secret).verify(request!.body, request!.headers as Record<string, string>);
      // The body is exactly the report as the API now returns it.
      const read = await api().get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
      expect(verified).to.deep.equal(read.body);
      expect(read.body).to.deep.equal(res.body.report);
      expect(read.body).to.include({ fromRestService: 'Acme CRM', address: '12 Elm Street' });
    });

    it('is not verifiable with another secret or a changed body', async () => {
      const company = await companyWithWebhook();
      const id = await apiReport(company.key);
      await publishTo(company, id, 'https://reports.example.com/r/1').expect(200);
      const [request] = suite.receiver.at(company.path);
      const headers = request!.headers as Record<string, string>;
      const other = (await companyWithWebhook()).secret;
      expect(() => new Webhook(other).verify(request!.body, headers)).to.throw();
      expect(() => new Webhook(company.secret).verify(request!.body.replace('published', 'new'), headers)).to.throw();
    });

    it('answers 502 naming the status when the receiver answers 500, and leaves the report unchanged', async () => {
      const company = await companyWithWebhook();
      suite.receiver.on(company.path, { status: 500, body: 'receiver exploded' });
      const id = await apiReport(company.key);
      const before = await api().get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
      const res = await publishTo(company, id, 'https://reports.example.com/r/1').expect(502);
      expect(res.body).to.deep.equal({ error: 'webhook delivery failed: the receiver answered HTTP 500' });
      expect(suite.receiver.at(company.path)).to.have.length(1);
      const after = await api().get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
      expect(after.body).to.deep.equal(before.body);
      // Not published, so the partner may still update it.
      await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ restId: before.body.restId, notes: 'n' }))
        .expect(200);
    });

    it('answers 502 when the receiver is slower than the configured timeout', async () => {
      const company = await companyWithWebhook();
      suite.receiver.on(company.path, 'hang');
      const id = await apiReport(company.key);
      const res = await publish(impatient.app, company.companyId, id, {
        publishedUrl: 'https://reports.example.com/r/1',
        notifyIntegration: true,
      }).expect(502);
      expect(res.body).to.deep.equal({ error: 'webhook delivery failed: no complete answer within 300 ms' });
      const read = await api().get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
      expect(read.body).to.include({ status: 'new', publishedUrl: '' });
      const [entry] = await deliveries(company.companyId);
      expect(entry).to.include({ reportId: id, httpStatus: null, error: 'no complete answer within 300 ms' });
    });

    it('answers 502 naming a refused connection', async () => {
      const company = await companyWithWebhook(`https://127.0.0.1:${await freePort()}/hook`);
      const id = await apiReport(company.key);
      const res = await publishTo(company, id, 'https://reports.example.com/r/1').expect(502);
      expect(res.body.error).to.match(/^webhook delivery failed: connection refused \(.*ECONNREFUSED.*\)$/);
    });

    it('does not follow a redirect: a 3xx is a failure and the target receives nothing', async () => {
      const company = await companyWithWebhook();
      const target = `/${unique('redirect-target')}`;
      suite.receiver.on(company.path, { redirectTo: suite.receiver.url(target) });
      const id = await apiReport(company.key);
      const res = await publishTo(company, id, 'https://reports.example.com/r/1').expect(502);
      expect(res.body).to.deep.equal({
        error: 'webhook delivery failed: the receiver answered HTTP 302 (redirects are not followed)',
      });
      expect(suite.receiver.at(target)).to.have.length(0);
    });

    it('answers 502 for a certificate the service does not trust', async () => {
      const company = await companyWithWebhook();
      const id = await apiReport(company.key);
      const untrusting = newApp({
        notifier: suite.receiver.notifier({ ca: undefined }),
      });
      try {
        const res = await publish(untrusting.app, company.companyId, id, {
          publishedUrl: 'https://r.example.com/1',
          notifyIntegration: true,
        }).expect(502);
        expect(res.body.error).to.match(/^webhook delivery failed: TLS error: .*certificate/i);
      } finally {
        await untrusting.pool.end();
      }
      expect(suite.receiver.at(company.path)).to.have.length(0);
    });
  });

  describe('the address guard', () => {
    it('refuses a loopback receiver without the allow-list, by literal IP and by a name resolving there', async () => {
      for (const host of ['127.0.0.1', 'localhost']) {
        const path = `/${unique('guarded')}`;
        const company = await companyWithWebhook(suite.receiver.url(path, host));
        const id = await apiReport(company.key);
        const res = await publish(guarded.app, company.companyId, id, {
          publishedUrl: 'https://r.example.com/1',
          notifyIntegration: true,
        }).expect(502);
        expect(res.body.error, host).to.match(
          /^webhook delivery failed: address (127\.0\.0\.1|::1) is refused \(loopback, private, link-local and metadata addresses are not allowed\)$/,
        );
        expect(suite.receiver.at(path)).to.have.length(0);
        const read = await api().get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
        expect(read.body.status).to.equal('new');
      }
    });

    it('refuses metadata, private and link-local addresses, IPv4 even with 127.0.0.1/32 allowed, and IPv6', async () => {
      const cases: Array<[string, { app: Express }]> = [
        ['169.254.169.254', suite.allowed],
        ['10.0.0.1', suite.allowed],
        ['192.168.1.1', suite.allowed],
        ['100.64.0.1', suite.allowed],
        // IPv6 through the app without an allow-list: request-filtering-agent warns when it compares an
        // address with a CIDR of the other family (the refusal is right either way).
        ['[::1]', guarded],
        ['[fd00:ec2::254]', guarded],
        ['[fe80::1]', guarded],
        ['[::ffff:127.0.0.1]', guarded],
      ];
      for (const [address, target] of cases) {
        const company = await companyWithWebhook(`https://${address}/latest/meta-data`);
        const id = await apiReport(company.key);
        const res = await publish(target.app, company.companyId, id, {
          publishedUrl: 'https://r.example.com/1',
          notifyIntegration: true,
        }).expect(502);
        expect(res.body.error, address).to.match(/^webhook delivery failed: address \S+ is refused/);
      }
    });
    it('refuses IPv6 forms embedding a refused IPv4 address: compatible, mapped, NAT64, 6to4', async () => {
      // As an IPv6-only network would allow the transition prefixes: what they embed is still checked.
      const transition = newApp({
        notifier: suite.receiver.notifier({ allowedCidrs: ['::/96', '::ffff:0:0/96', '64:ff9b::/96', '2002::/16'] }),
      });
      const cases: Array<[string, { app: Express }]> = [
        // The case: request-filtering-agent calls ::/96 public unicast.
        ['[::127.0.0.1]', guarded],
        ['[::ffff:7f00:1]', guarded],
        ['[64:ff9b::127.0.0.1]', guarded],
        ['[2002:7f00:1::1]', guarded],
        ['[::169.254.169.254]', transition],
        ['[::ffff:10.0.0.1]', transition],
        ['[64:ff9b::192.168.1.1]', transition],
        ['[2002:a9fe:a9fe::1]', transition],
        ['[::127.0.0.1]', transition],
      ];
      try {
        for (const [address, target] of cases) {
          const company = await companyWithWebhook(`https://${address}:${suite.receiver.port}/hook`);
          const id = await apiReport(company.key);
          const res = await publish(target.app, company.companyId, id, {
            publishedUrl: 'https://r.example.com/1',
            notifyIntegration: true,
          }).expect(502);
          expect(res.body.error, address).to.match(
            /^webhook delivery failed: address [0-9a-f:]+ is refused \(loopback, private, link-local and metadata addresses are not allowed\)$/,
          );
          const [entry] = await deliveries(company.companyId);
          expect(entry!.error, address).to.match(/^address [0-9a-f:]+ is refused/);
        }
      } finally {
        await transition.pool.end();
      }
    });
  });

  describe('when no webhook is due', () => {
    it('publishes an application-created report without a webhook, even when confirmed', async () => {
      const company = await companyWithWebhook();
      const created = await api()
        .post(`/internal/companies/${company.companyId}/reports`)
        .set(auth)
        .send(reportInput())
        .expect(201);
      const res = await publish(suite.allowed.app, company.companyId, created.body.id, {
        publishedUrl: 'https://r.example.com/1',
        notifyIntegration: true,
      }).expect(200);
      expect(res.body.webhook).to.deep.equal({ outcome: 'not_sent', reason: 'created_in_application' });
      expect(res.body.report).to.include({
        status: 'published',
        publishedUrl: 'https://r.example.com/1',
        fromRestService: '',
      });
      expect(suite.receiver.at(company.path)).to.have.length(0);
      expect(await deliveries(company.companyId)).to.deep.equal([]);
    });

    it('never notifies for reports of a revoked integration, even after a new key and address are set up', async () => {
      const company = await companyWithWebhook();
      const oldReport = await apiReport(company.key);
      await api().delete(`/internal/companies/${company.companyId}/integration`).set(auth).expect(204);
      const revokedRes = await publish(suite.allowed.app, company.companyId, oldReport, {
        publishedUrl: 'https://r.example.com/1',
        notifyIntegration: true,
      }).expect(200);
      expect(revokedRes.body.webhook).to.deep.equal({ outcome: 'not_sent', reason: 'integration_revoked' });

      const newKey = (await api().post(`/internal/companies/${company.companyId}/api-keys`).set(auth).expect(201)).body
        .key as string;
      const newPath = `/${unique('new-hook')}`;
      await api()
        .put(`/internal/companies/${company.companyId}/webhook`)
        .set(auth)
        .send({ url: suite.receiver.url(newPath) })
        .expect(200);
      const republished = await publish(suite.allowed.app, company.companyId, oldReport, {
        publishedUrl: 'https://r.example.com/2',
        notifyIntegration: true,
      }).expect(200);
      expect(republished.body.webhook).to.deep.equal({ outcome: 'not_sent', reason: 'integration_revoked' });
      // The same update through the new key does not move the report to the new integration.
      const restId = republished.body.report.restId as string;
      await api().post('/reports/new').set('X-API-KEY', newKey).send(reportInput({ restId })).expect(409);

      // A report of the new integration does notify the new address.
      const newReport = await apiReport(newKey);
      const sent = await publish(suite.allowed.app, company.companyId, newReport, {
        publishedUrl: 'https://r.example.com/3',
        notifyIntegration: true,
      }).expect(200);
      expect(sent.body.webhook.outcome).to.equal('sent');
      expect(suite.receiver.at(company.path)).to.have.length(0);
      expect(suite.receiver.at(newPath)).to.have.length(1);
    });

    it('publishes without a webhook when the inspector declines (notifyIntegration: false)', async () => {
      const company = await companyWithWebhook();
      const id = await apiReport(company.key);
      const res = await publishTo(company, id, 'https://r.example.com/1', false).expect(200);
      expect(res.body.webhook).to.deep.equal({ outcome: 'not_sent', reason: 'not_requested' });
      expect(res.body.report.status).to.equal('published');
      expect(suite.receiver.at(company.path)).to.have.length(0);
    });

    it('publishes without a webhook when the company has no address', async () => {
      const company = await newCompany();
      const id = await apiReport(company.key);
      const res = await publishTo(company, id, 'https://r.example.com/1').expect(200);
      expect(res.body.webhook).to.deep.include({ outcome: 'not_sent', reason: 'no_webhook_address' });
      expect(res.body.webhook.eventId).to.match(/^msg_/);
    });
  });

  describe('webhook-id', () => {
    it('stays the same when a failed publish is retried, and is new for a later re-publish', async () => {
      const company = await companyWithWebhook();
      const id = await apiReport(company.key);
      suite.receiver.on(company.path, { status: 503 });
      await publishTo(company, id, 'https://r.example.com/1').expect(502);
      await publishTo(company, id, 'https://r.example.com/1').expect(502);
      suite.receiver.on(company.path, { status: 200 });
      await publishTo(company, id, 'https://r.example.com/1').expect(200);
      await publishTo(company, id, 'https://r.example.com/2').expect(200);

      const ids = suite.receiver.at(company.path).map((r) => r.headers['webhook-id']);
      expect(ids).to.have.length(4);
      expect(ids[1]).to.equal(ids[0]);
      expect(ids[2]).to.equal(ids[0]);
      expect(ids[3]).to.not.equal(ids[0]);
      for (const r of suite.receiver.at(company.path)) {
        expect(() => new Webhook(company.secret).verify(r.body, r.headers as Record<string, string>)).to.not.throw();
      }
    });

    it('is new after a failed publish was completed without notifying', async () => {
      const company = await companyWithWebhook();
      const id = await apiReport(company.key);
      suite.receiver.on(company.path, { status: 500 });
      await publishTo(company, id, 'https://r.example.com/1').expect(502);
      await publishTo(company, id, 'https://r.example.com/1', false).expect(200);
      suite.receiver.on(company.path, { status: 200 });
      await publishTo(company, id, 'https://r.example.com/2').expect(200);
      const [failed, later] = suite.receiver.at(company.path).map((r) => r.headers['webhook-id']);
      expect(later).to.not.equal(failed);
    });
  });

  describe('the delivery log', () => {
    it('lists every attempt newest first with status, error, duration and at most 1 KiB of the answer', async () => {
      const company = await companyWithWebhook();
      const id = await apiReport(company.key);
      suite.receiver.on(company.path, { status: 500, body: 'x'.repeat(5000) });
      const failed = await publishTo(company, id, 'https://r.example.com/1');
      expect(failed.status).to.equal(502);
      suite.receiver.on(company.path, { status: 202, body: 'thanks' });
      const sent = await publishTo(company, id, 'https://r.example.com/1').expect(200);

      const log = await deliveries(company.companyId);
      const webhookId = suite.receiver.at(company.path)[0]!.headers['webhook-id'];
      expect(log).to.have.length(2);
      expect(log[0]).to.deep.include({
        id: sent.body.webhook.deliveryId,
        reportId: id,
        webhookId,
        url: suite.receiver.url(company.path),
        httpStatus: 202,
        error: '',
        responseExcerpt: 'thanks',
      });
      expect(log[1]).to.deep.include({
        reportId: id,
        webhookId,
        url: suite.receiver.url(company.path),
        httpStatus: 500,
        error: 'the receiver answered HTTP 500',
        responseExcerpt: 'x'.repeat(1024),
      });
      expect(Date.parse(log[0]!.attemptedAt as string)).to.be.at.least(Date.parse(log[1]!.attemptedAt as string));
      for (const entry of log) expect(entry.durationMs).to.be.a('number').and.at.least(0);

      const one = await api()
        .get(`/internal/companies/${company.companyId}/webhook-deliveries?limit=1`)
        .set(auth)
        .expect(200);
      expect(one.body).to.deep.equal([log[0]]);
    });

    it('logs refused addresses too, and shows each company only its own attempts', async () => {
      const company = await companyWithWebhook('https://10.1.2.3/hook');
      const id = await apiReport(company.key);
      await publishTo(company, id, 'https://r.example.com/1').expect(502);
      const log = await deliveries(company.companyId);
      expect(log).to.have.length(1);
      expect(log[0]).to.deep.include({
        reportId: id,
        url: 'https://10.1.2.3/hook',
        httpStatus: null,
        responseExcerpt: '',
      });
      expect(log[0]!.error).to.match(/^address 10\.1\.2\.3 is refused/);
      expect(await deliveries((await newCompany()).companyId)).to.deep.equal([]);
    });
  });

  describe('while a delivery is in flight', () => {
    it('answers 409 to another publish of the report and to partner updates of it, and sends one webhook', async () => {
      const company = await companyWithWebhook();
      const restId = unique('crm');
      const id = await apiReport(company.key, { restId });
      const receiverAnswers = gate();
      suite.receiver.on(company.path, { status: 204, waitFor: () => receiverAnswers.opened });
      const body = { publishedUrl: 'https://r.example.com/1', notifyIntegration: true };
      const first = publish(suite.allowed.app, company.companyId, id, body).then((res) => res);
      try {
        await until(() => suite.receiver.at(company.path).length === 1, 'delivered');
        const inFlight = {
          error: `report ${id} is being published (its webhook delivery is in flight): try again later`,
        };
        // From another server process too, and without notifying: one publish of a report at a time.
        await publish(impatient.app, company.companyId, id, body).expect(409, inFlight);
        await publish(suite.allowed.app, company.companyId, id, { ...body, notifyIntegration: false }).expect(
          409,
          inFlight,
        );
        await api()
          .post('/reports/new')
          .set('X-API-KEY', company.key)
          .send(reportInput({ restId, notes: 'too late' }))
          .expect(409, {
            error: `report with restId ${restId} is being published (its webhook delivery is in flight): try again later`,
          });
        // The attempt is in the log before its outcome is known.
        const [pending, ...others] = await deliveries(company.companyId);
        expect(others).to.have.length(0);
        expect(pending).to.deep.include({ reportId: id, httpStatus: null, error: OUTCOME_NOT_RECORDED });
      } finally {
        receiverAnswers.open();
      }
      const sent = await first;
      expect(sent.status).to.equal(200);
      expect(sent.body.report).to.include({ status: 'published', inspectorNotes: '' });
      expect(suite.receiver.at(company.path)).to.have.length(1);
      const [done, ...more] = await deliveries(company.companyId);
      expect(more).to.have.length(0);
      expect(done).to.deep.include({ id: sent.body.webhook.deliveryId, httpStatus: 204, error: '' });
      // Once it has answered, the report can be published again (a re-publish: a new webhook-id).
      await publish(impatient.app, company.companyId, id, body).expect(200);
      const [a, b] = suite.receiver.at(company.path).map((r) => r.headers['webhook-id']);
      expect(b).to.not.equal(a);
    });

    it("keeps no 409 of a keyed update for its Idempotency-Key: once the delivery failed, the key's retry is written", async () => {
      const company = await companyWithWebhook();
      const restId = unique('crm');
      const id = await apiReport(company.key, { restId });
      const receiverAnswers = gate();
      suite.receiver.on(company.path, { status: 500, waitFor: () => receiverAnswers.opened });
      const body = { publishedUrl: 'https://r.example.com/1', notifyIntegration: true };
      const publishing = publish(suite.allowed.app, company.companyId, id, body).then((res) => res);
      const key = unique('key');
      const update = () =>
        api()
          .post('/reports/new')
          .set('X-API-KEY', company.key)
          .set('Idempotency-Key', key)
          .send(reportInput({ restId, notes: 'after the publish' }));
      try {
        await until(() => suite.receiver.at(company.path).length === 1, 'delivered');
        const refused = await update().expect(409);
        expect(refused.body.error).to.match(/is being published .*: try again later$/);
      } finally {
        receiverAnswers.open();
      }
      expect((await publishing).status).to.equal(502);
      const retried = await update().expect(200);
      expect(retried.body).to.deep.equal({ result: 'ok', id });
      const { body: report } = await api().get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
      expect(report.inspectorNotes).to.equal('after the publish');
    });

    it('answers 503 with Retry-After past WEBHOOK_MAX_IN_FLIGHT deliveries, sends nothing and changes nothing', async () => {
      const limited = newApp({
        notifier: suite.receiver.notifier({ maxInFlight: 2 }),
      });
      const receiverAnswers = gate();
      try {
        const company = await companyWithWebhook();
        suite.receiver.on(company.path, { status: 204, waitFor: () => receiverAnswers.opened });
        const [one, two, three] = [
          await apiReport(company.key),
          await apiReport(company.key),
          await apiReport(company.key),
        ];
        const body = { publishedUrl: 'https://r.example.com/1', notifyIntegration: true };
        const running = [one, two].map((id) => publish(limited.app, company.companyId, id!, body).then((res) => res));
        await until(() => suite.receiver.at(company.path).length === 2, 'both delivered');

        const refused = await publish(limited.app, company.companyId, three!, body).expect(503);
        expect(refused.body).to.deep.equal({
          error: 'too many webhook deliveries in flight: publish again in a moment',
        });
        expect(refused.headers['retry-after']).to.equal('1');
        // A publish that sends nothing takes no place.
        await publish(limited.app, company.companyId, three!, { ...body, notifyIntegration: false }).expect(200);

        receiverAnswers.open();
        for (const res of await Promise.all(running)) expect(res.status).to.equal(200);
        expect(suite.receiver.at(company.path)).to.have.length(2);
        expect((await deliveries(company.companyId)).map((d) => d.reportId)).to.have.members([one, two]);
        // The places are given back.
        await publish(limited.app, company.companyId, three!, body).expect(200);
      } finally {
        receiverAnswers.open();
        await limited.pool.end();
      }
    });
  });

  it('cuts the response excerpt before a character that 1 KiB would split', async () => {
    const company = await companyWithWebhook();
    const id = await apiReport(company.key);
    // 1,023 bytes, then "é" (2 bytes) and "€" (3 bytes): the limit falls inside "é".
    suite.receiver.on(company.path, { status: 500, body: Buffer.from(`${'x'.repeat(1023)}é€ and more`, 'utf8') });
    await publishTo(company, id, 'https://r.example.com/1').expect(502);
    const path2 = `/${unique('hook')}`;
    await api()
      .put(`/internal/companies/${company.companyId}/webhook`)
      .set(auth)
      .send({ url: suite.receiver.url(path2) })
      .expect(200);
    // 1,022 bytes, then "€": the limit falls inside it.
    suite.receiver.on(path2, { status: 500, body: `${'y'.repeat(1022)}€€` });
    await publishTo(company, id, 'https://r.example.com/1').expect(502);
    const [second, first] = (await deliveries(company.companyId)).map((d) => d.responseExcerpt as string);
    expect(first).to.equal('x'.repeat(1023));
    expect(second).to.equal('y'.repeat(1022));
  });
});
