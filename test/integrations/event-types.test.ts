import { expect } from 'chai';
import { DEFAULT_EVENT_TYPES, EVENT_TYPES, EVENT_TYPE_NAMES } from '../../src/integrations/webhooks/event-types.js';
import { sampleReport } from '../../src/reports/index.js';
import { contract, spec } from '../support/contract.js';
import { api, newCompany, pool } from '../support/harness.js';
import { auth } from '../support/webhooks.js';

/**
 * The event types' catalogue (src/integrations/webhooks/event-types.ts) held together with openapi.yaml and the
 * integrations table, and an integration's choice of types through the application API.
 */

const schemas = (spec as unknown as { components: { schemas: Record<string, { enum?: string[] }> } }).components
  .schemas;

describe('the event types: catalogue, document and table agree', () => {
  it("has a row for each of openapi.yaml's EventType values, each carried by its own webhook", () => {
    expect(EVENT_TYPE_NAMES).to.have.members(schemas.EventType!.enum!);
    const webhooks = EVENT_TYPE_NAMES.map((type) => EVENT_TYPES[type].webhook);
    expect(Object.keys(spec.webhooks ?? {})).to.have.members(webhooks);
    for (const type of EVENT_TYPE_NAMES) expect(contract.webhookOfType(type), type).to.equal(EVENT_TYPES[type].webhook);
  });

  it("makes each type's body as its webhook declares it, the published report's being the report itself", () => {
    const report = JSON.stringify(sampleReport(new Date()));
    const headers = {
      'content-type': 'application/json',
      'webhook-id': 'msg_catalogue',
      'webhook-timestamp': '1773497109',
      'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    };
    for (const type of EVENT_TYPE_NAMES) {
      const { webhook, body } = EVENT_TYPES[type];
      const problems = contract.webhookProblems(webhook, { ...headers, 'webhook-event-type': type }, body(report));
      expect(problems, type).to.deep.equal([]);
    }
    expect(EVENT_TYPES['report.published'].body(report)).to.equal(report);
  });

  it('gives each webhook an example body that its schema accepts', () => {
    for (const type of EVENT_TYPE_NAMES) {
      const { webhook } = EVENT_TYPES[type];
      const at = `#/webhooks/${webhook}/post/requestBody/content/application~1json`;
      const media = spec.webhooks![webhook]!.post as {
        requestBody: { content: { 'application/json': { example: unknown } } };
      };
      const { example } = media.requestBody.content['application/json'];
      expect(contract.schemaProblems(`${at}/schema`, example), webhook).to.deep.equal([]);
    }
  });

  it("starts integrations with the catalogue's default, in the table as in the code", async () => {
    const { rows } = await pool().query<{ column_default: string }>(
      `SELECT column_default FROM information_schema.columns
        WHERE table_name = 'integrations' AND column_name = 'event_types'`,
    );
    expect(rows[0]!.column_default).to.equal(`'{${DEFAULT_EVENT_TYPES.join(',')}}'::text[]`);
  });
});

describe("an integration's event types (PUT …/webhook, GET …/integration)", () => {
  const integration = async (companyId: string) =>
    (await api().get(`/internal/companies/${companyId}/integration`).set(auth).expect(200)).body as {
      eventTypes: string[];
      webhookUrl: string | null;
    };

  it('shows report.published by default, sets the choice, and keeps it when a PUT leaves it out', async () => {
    const { companyId } = await newCompany();
    expect((await integration(companyId)).eventTypes).to.deep.equal(['report.published']);
    const put = (body: object) => api().put(`/internal/companies/${companyId}/webhook`).set(auth).send(body);
    const set = await put({ url: 'https://crm.example.com/a', eventTypes: ['report.started'] }).expect(200);
    expect(set.body.eventTypes).to.deep.equal(['report.started']);
    const kept = await put({ url: 'https://crm.example.com/b' }).expect(200);
    expect(kept.body.eventTypes).to.deep.equal(['report.started']);
    expect(await integration(companyId)).to.deep.include({
      eventTypes: ['report.started'],
      webhookUrl: 'https://crm.example.com/b',
    });
    await api().delete(`/internal/companies/${companyId}/integration`).set(auth).expect(204);
    expect((await integration(companyId)).eventTypes).to.deep.equal(['report.published']);
  });

  it('refuses an unknown type, none, a repeated one or a string with 400 naming the field, live and sandbox, changing nothing', async () => {
    const { companyId } = await newCompany();
    const refusals: [unknown, string][] = [
      [['report.published', 'report.deleted'], 'eventTypes[1] must be one of report.published, report.started'],
      [[], 'eventTypes must name at least one event type'],
      [['report.started', 'report.started'], 'eventTypes must not name a type twice'],
      ['report.started', 'eventTypes must be an array of event types'],
    ];
    for (const path of ['webhook', 'sandbox/webhook']) {
      for (const [eventTypes, error] of refusals) {
        await api()
          .put(`/internal/companies/${companyId}/${path}`)
          .set(auth)
          .send({ url: 'https://crm.example.com/hook', eventTypes })
          .expect(400, { error });
      }
    }
    expect(await integration(companyId)).to.deep.include({ eventTypes: ['report.published'], webhookUrl: null });
  });
});
