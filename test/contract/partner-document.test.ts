import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { parse } from 'yaml';
import { SPEC_PATH } from '../../src/platform/http/openapi-validator.js';
import { createApp } from '../../src/app.js';
import { app, appDeps, pool } from '../support/harness.js';
import {
  operationsOf,
  PARTNER_DOCUMENT_PATH,
  partnerContract,
  partnerDocument,
  type OpenApiDocument,
} from './support/partner-document.js';

const full = parse(readFileSync(SPEC_PATH, 'utf8')) as OpenApiDocument;

/** Operations of a document that are meant for partners: not x-internal themselves nor on an x-internal path. */
const publicOperations = (doc: OpenApiDocument) =>
  operationsOf(doc).filter((op) => !op.operation['x-internal'] && !op.pathItem['x-internal']);

/** Where a string of the JSON document is something else in the loaded one, as JSON pointers. */
function stringsNoLongerStrings(json: unknown, loaded: unknown, at = ''): string[] {
  if (typeof json === 'string') return typeof loaded === 'string' ? [] : [`${at}: ${String(loaded)}`];
  if (typeof json !== 'object' || json === null) return [];
  return Object.entries(json).flatMap(([key, value]) =>
    stringsNoLongerStrings(value, (loaded as Record<string, unknown> | undefined)?.[key], `${at}/${key}`),
  );
}

// The documents and the page are public resources of the service, not operations of the contract, so
// these requests go through plain supertest rather than the harness's contract-checking api().
describe('the published partner document', () => {
  /** The served document in YAML and JSON, checked to be the same, with the server each names. */
  async function served(target = app(), headers: Record<string, string> = { Host: 'intake.example.test' }) {
    const yamlRes = await request(target).get('/openapi.yaml').set(headers).expect(200);
    expect(yamlRes.headers['content-type']).to.match(/^application\/yaml/);
    const jsonRes = await request(target).get('/openapi.json').set(headers).expect(200);
    expect(jsonRes.headers['content-type']).to.match(/^application\/json/);
    expect(parse(yamlRes.text)).to.deep.equal(jsonRes.body);
    return { document: jsonRes.body as OpenApiDocument, server: (jsonRes.body.servers as { url: string }[])[0]!.url };
  }

  it('is served without a key as YAML and JSON, both the committed generated document but for servers', async () => {
    const { document } = await served();
    expect({ ...document, servers: partnerDocument.servers }).to.deep.equal(partnerDocument);
    expect(document.servers).to.have.length(1);
  });

  it('reads the same to YAML 1.1 loaders (js-yaml, PyYAML): dates, yes/no and the like stay strings', async () => {
    const host = { Host: 'intake.example.test' };
    for (const address of ['/openapi', '/openapi-3.0']) {
      const yamlRes = await request(app()).get(`${address}.yaml`).set(host).expect(200);
      const json = (await request(app()).get(`${address}.json`).set(host).expect(200)).body as unknown;
      // A %YAML directive would say so to the loader, but some tools refuse a document that starts with one.
      expect(yamlRes.text).not.to.match(/^%YAML/m);
      // yaml's YAML 1.1 schema reads what those loaders read: 2026-03-14 as a timestamp, yes and on as true, 1:30 as 90.
      const loaded = parse(yamlRes.text, { version: '1.1' }) as unknown;
      expect(stringsNoLongerStrings(json, loaded), address).to.deep.equal([]);
      expect(loaded, address).to.deep.equal(json);
    }
  });

  it('is committed in generated/ as YAML that reads the same to YAML 1.1 loaders, in both OpenAPI versions', () => {
    for (const name of ['partner-openapi', 'partner-openapi-3.0']) {
      const file = (ext: string) =>
        readFileSync(path.join(path.dirname(PARTNER_DOCUMENT_PATH), `${name}.${ext}`), 'utf8');
      const json = JSON.parse(file('json')) as unknown;
      const loaded = parse(file('yaml'), { version: '1.1' }) as unknown;
      expect(stringsNoLongerStrings(json, loaded), name).to.deep.equal([]);
      expect(loaded, name).to.deep.equal(json);
    }
  });

  it('names the origin it was requested at in servers, so generated clients default to it', async () => {
    expect((await served(app(), { Host: 'intake.example.test:8443' })).server).to.equal(
      'http://intake.example.test:8443',
    );
    expect((await served(app(), { Host: '[::1]:3000' })).server).to.equal('http://[::1]:3000');
    // A Host that names no host cannot make a URL: "/" is the document's own origin.
    expect((await served(app(), { Host: 'a b/c' })).server).to.equal('/');
  });

  it('trusts X-Forwarded-Proto and X-Forwarded-Host only when configured to (TRUST_PROXY)', async () => {
    const forwarded = { Host: '10.0.0.5:3000', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'api.example.com' };
    expect((await served(app(), forwarded)).server).to.equal('http://10.0.0.5:3000');
    const behindProxy = createApp(appDeps(pool(), { trustProxy: true }));
    expect((await served(behindProxy, forwarded)).server).to.equal('https://api.example.com');
  });

  it('names PUBLIC_BASE_URL when it is set, whatever the request says', async () => {
    const configured = createApp(
      appDeps(pool(), { publicBaseUrl: 'https://api.example.com/intake', trustProxy: true }),
    );
    const attempts: Record<string, string>[] = [
      { Host: 'evil.example' },
      { 'X-Forwarded-Proto': 'http', 'X-Forwarded-Host': 'evil.example' },
    ];
    for (const headers of attempts) {
      expect((await served(configured, headers)).server).to.equal('https://api.example.com/intake');
    }
  });

  it('is readable from any origin, while the API itself allows no cross-origin call (server-to-server)', async () => {
    const origin = { Origin: 'https://crm.example.com' };
    for (const path of ['/openapi.yaml', '/openapi.json']) {
      await request(app()).get(path).set(origin).expect(200).expect('Access-Control-Allow-Origin', '*');
    }
    const apiAnswers = [
      await request(app()).get('/auth').set(origin).set('X-API-KEY', 'irk_not-a-key'),
      await request(app()).get('/reports').set(origin),
      await request(app())
        .options('/reports/new')
        .set({ ...origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'x-api-key' }),
    ];
    for (const res of apiAnswers) {
      expect(res.status, res.text).to.be.within(400, 499);
      expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).to.deep.equal([]);
    }
  });

  it('keeps no x-internal key, of any value', async () => {
    const { document } = await served();
    expect(JSON.stringify(document)).not.to.include('"x-internal"');
  });

  it('has every partner operation of openapi.yaml and the webhooks', () => {
    const expected = publicOperations(full).map((op) => op.operationId);
    expect(expected).to.include.members(['verifyKey', 'createOrUpdateReport', 'listReports', 'getReport']);
    expect(operationsOf(partnerDocument).map((op) => op.operationId)).to.have.members(expected);
    expect(Object.keys(partnerDocument.webhooks ?? {})).to.deep.equal(['reportPublished', 'reportStarted']);
  });

  it('documents the webhook as signed, not keyed, with a complete example of its body', () => {
    const webhook = partnerDocument.webhooks!.reportPublished!.post! as unknown as {
      security: unknown[];
      requestBody: { content: { 'application/json': { example: Record<string, unknown> } } };
    };
    expect(webhook.security).to.deep.equal([]);
    const { example } = webhook.requestBody.content['application/json'];
    const schema = '#/webhooks/reportPublished/post/requestBody/content/application~1json/schema';
    expect(partnerContract.schemaProblems(schema, example)).to.deep.equal([]);
    const report = partnerDocument.components!.schemas!.Report as { required: string[] };
    expect(Object.keys(example)).to.have.members(report.required);
    expect(example).to.include({ status: 'published' });
    expect(example.publishedUrl).to.match(/^https:\/\//);
  });

  it('documents the reportStarted webhook as signed, its example the type and a whole report in progress', () => {
    const webhook = partnerDocument.webhooks!.reportStarted!.post! as unknown as {
      security: unknown[];
      requestBody: { content: { 'application/json': { example: { type: string; report: Record<string, unknown> } } } };
    };
    expect(webhook.security).to.deep.equal([]);
    const { example } = webhook.requestBody.content['application/json'];
    const schema = '#/webhooks/reportStarted/post/requestBody/content/application~1json/schema';
    expect(partnerContract.schemaProblems(schema, example)).to.deep.equal([]);
    const report = partnerDocument.components!.schemas!.Report as { required: string[] };
    expect(example.type).to.equal('report.started');
    expect(Object.keys(example.report)).to.have.members(report.required);
    expect(example.report).to.include({ status: 'in_progress', publishedUrl: '' });
  });

  it('gives examples where tools look for them: every parameter, the list, and samples in curl, TypeScript and Python', () => {
    for (const { operationId, operation, pathItem } of operationsOf(partnerDocument)) {
      const parameters = [
        ...((pathItem.parameters as typeof operation.parameters) ?? []),
        ...(operation.parameters ?? []),
      ];
      for (const parameter of parameters as { name: string; example?: unknown }[]) {
        expect(parameter.example, `${operationId} ${parameter.name}`).not.to.equal(undefined);
      }
      const samples = operation['x-codeSamples'];
      expect(
        samples?.map((sample) => sample.lang),
        operationId,
      ).to.deep.equal(['Shell', 'TypeScript', 'Python']);
    }
    const list = operationsOf(partnerDocument).find((op) => op.operationId === 'listReports')!;
    const { example } = (list.operation.responses['200'] as { content: Record<string, { example: unknown }> }).content[
      'application/json'
    ]!;
    const schema = '#/paths/~1reports/get/responses/200/content/application~1json/schema';
    expect(partnerContract.schemaProblems(schema, example)).to.deep.equal([]);
    // The list's samples walk every page by the Link header.
    for (const sample of list.operation['x-codeSamples']!)
      expect(sample.source).to.match(/rel="next"|links\.get\("next"\)/);
  });

  it('leaves out everything internal: operations, paths, tags, security schemes and unused schemas', () => {
    const text = JSON.stringify(partnerDocument);
    expect(text).not.to.include('"x-internal":true');
    expect(Object.keys(partnerDocument.paths).filter((p) => p.startsWith('/internal'))).to.deep.equal([]);
    const usedTags = new Set(operationsOf(partnerDocument).flatMap((op) => op.operation.tags ?? []));
    expect((partnerDocument.tags ?? []).map((t) => t.name).filter((name) => !usedTags.has(name))).to.deep.equal([]);
    for (const scheme of Object.keys(partnerDocument.components?.securitySchemes ?? {})) {
      expect(text, `security scheme ${scheme} is not used`).to.include(`"${scheme}":[]`);
    }
    for (const schema of Object.keys(partnerDocument.components?.schemas ?? {})) {
      expect(text, `schema ${schema} is not used`).to.include(`"#/components/schemas/${schema}"`);
    }
  });
});

describe('GET /docs', () => {
  it('serves a page whose scripts are files of this service, under a policy without inline scripts', async () => {
    const res = await request(app()).get('/docs').expect(200);
    expect(res.headers['content-type']).to.match(/^text\/html/);
    expect(res.headers['content-security-policy']).to.include("script-src 'self'");
    expect(res.headers['content-security-policy']).not.to.include('unsafe-eval');
    expect(res.text).not.to.match(/<script>|<script [^>]*>[^<]/);
    await request(app())
      .get('/docs/redoc.standalone.js')
      .expect(200)
      .expect('Content-Type', /javascript/);
  });
});
