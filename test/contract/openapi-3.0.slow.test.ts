import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as chai from 'chai';
import chaiResponseValidatorModule from 'chai-openapi-response-validator';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import request from 'supertest';
import { parse } from 'yaml';
import { newCompany, reportInput } from '../support/harness.js';
import { startLiveServer, type LiveServer } from './support/live-server.js';
import { PARTNER_DOCUMENT_PATH } from './support/partner-document.js';

const { expect } = chai;
// A CommonJS module whose export is `default`: what TypeScript's NodeNext types call the module is the function.
// A CommonJS module compiled with `exports.default`: Node's import gives the exports object or, through a
// loader's interop, the function itself.
type Plugin = (document: object) => Chai.ChaiPlugin;
const chaiResponseValidator = ((chaiResponseValidatorModule as unknown as { default?: Plugin }).default ??
  chaiResponseValidatorModule) as unknown as Plugin;
const committed = JSON.parse(
  readFileSync(path.join(path.dirname(PARTNER_DOCUMENT_PATH), 'partner-openapi-3.0.json'), 'utf8'),
) as Record<string, unknown>;

/** What tools that read only OpenAPI 3.0 (openapi-backend, jest-openapi's engine, dredd) get from the service. */
describe('the OpenAPI 3.0.3 partner document', () => {
  let server: LiveServer;
  let served: Record<string, unknown>;

  before(async () => {
    server = await startLiveServer();
    served = (await request(server.baseUrl).get('/openapi-3.0.json').expect(200)).body;
  });

  after(async () => {
    await server?.close();
  });

  it('is served without a key as JSON and YAML: the committed generated document, naming the service', async () => {
    const yamlRes = await request(server.baseUrl)
      .get('/openapi-3.0.yaml')
      .expect(200)
      .expect('Content-Type', /^application\/yaml/);
    expect(parse(yamlRes.text)).to.deep.equal(served);
    expect(served.openapi).to.equal('3.0.3');
    expect(served.servers).to.deep.equal([
      { url: server.baseUrl, description: 'The service that published this document' },
    ]);
    expect({ ...served, servers: committed.servers }).to.deep.equal(committed);
  });

  it('gives openapi-backend every partner operation, the sandbox included', async () => {
    const backend = new OpenAPIBackend({ definition: served as unknown as Document, strict: true, quick: false });
    await backend.init();
    expect(backend.getOperations().map((op) => op.operationId)).to.have.members([
      'verifyKey',
      'createOrUpdateReport',
      'listReports',
      'getReport',
      'startSandboxReport',
      'publishSandboxReport',
      'wipeSandbox',
      'listEvents',
      'getEvent',
      'redeliverEvent',
    ]);
  });

  it("validates the service's live answers with chai-openapi-response-validator", async () => {
    chai.use(chaiResponseValidator(served));
    const { key } = await newCompany();
    const live = request(server.baseUrl);
    const answers = [
      await live.get('/auth').set('X-API-KEY', key).expect(200),
      await live.get('/auth').set('X-API-KEY', 'irk_not-a-key').expect(400),
      await live
        .post('/reports/new')
        .set('X-API-KEY', key)
        .send(reportInput({ restId: 'crm 42' }))
        .expect(200),
      await live
        .post('/reports/new')
        .set('X-API-KEY', key)
        .send(reportInput({ restId: 'crm 43' }))
        .expect(200),
      await live.post('/reports/new').set('X-API-KEY', key).send({ clientNames: ' ' }).expect(400),
      await live
        .get('/reports?limit=1')
        .set('X-API-KEY', key)
        .expect(200)
        .expect('Link', /rel="next"/),
      await live.get('/reports?restId=crm+42').set('X-API-KEY', key).expect(200),
      await live.get('/reports/5b0c6e2e-8f9a-4d55-9d4e-0c1f8e6f2a10').set('X-API-KEY', key).expect(404),
    ];
    const created = answers[2]!.body as { id: string };
    answers.push(await live.get(`/reports/${created.id}`).set('X-API-KEY', key).expect(200));
    // satisfyApiSpec is a property assertion (it throws when read), as chai plugins define them.
    // eslint-disable-next-line @typescript-eslint/no-unused-expressions
    for (const answer of answers) expect(answer).to.satisfyApiSpec;
  });
});
