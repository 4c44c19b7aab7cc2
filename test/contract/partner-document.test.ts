import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import request from 'supertest';
import { parse } from 'yaml';
import { SPEC_PATH } from '../../src/openapi.js';
import { app } from '../support/harness.js';
import { launchBrowser, type Browser } from './support/browser.js';
import { startLiveServer, type LiveServer } from './support/live-server.js';
import { operationsOf, partnerDocument, type OpenApiDocument } from './support/partner-document.js';

const full = parse(readFileSync(SPEC_PATH, 'utf8')) as OpenApiDocument;

/** Operations of a document that are meant for partners: not x-internal themselves nor on an x-internal path. */
const publicOperations = (doc: OpenApiDocument) =>
  operationsOf(doc).filter((op) => !op.operation['x-internal'] && !op.pathItem['x-internal']);

// The documents and the page are public resources of the service, not operations of the contract, so
// these requests go through plain supertest rather than the harness's contract-checking api().
describe('the published partner document', () => {
  it('is served without a key as YAML and JSON, both the committed generated document', async () => {
    const yamlRes = await request(app()).get('/openapi.yaml').expect(200);
    expect(yamlRes.headers['content-type']).to.match(/^application\/yaml/);
    expect(parse(yamlRes.text)).to.deep.equal(partnerDocument);
    const jsonRes = await request(app()).get('/openapi.json').expect(200);
    expect(jsonRes.headers['content-type']).to.match(/^application\/json/);
    expect(jsonRes.body).to.deep.equal(partnerDocument);
  });

  it('has every partner operation of openapi.yaml and the reportPublished webhook', () => {
    const expected = publicOperations(full).map((op) => op.operationId);
    expect(expected).to.include.members(['verifyKey', 'createOrUpdateReport', 'listReports', 'getReport']);
    expect(operationsOf(partnerDocument).map((op) => op.operationId)).to.have.members(expected);
    expect(Object.keys(partnerDocument.webhooks ?? {})).to.deep.equal(['reportPublished']);
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
  let server: LiveServer;
  let browser: Browser;

  before(async function () {
    this.timeout(60_000);
    server = await startLiveServer();
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

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

  it('renders every partner operation and the webhook in headless Chromium, loading nothing from elsewhere', async function () {
    this.timeout(60_000);
    const page = await browser.context.newPage();
    const foreign: string[] = [];
    const problems: string[] = [];
    page.on('request', (req) => {
      if (!req.url().startsWith(server.baseUrl) && !/^(data|blob):/.test(req.url())) foreign.push(req.url());
    });
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(msg.text());
    });
    page.on('pageerror', (err) => problems.push(err.message));

    await page.goto(`${server.baseUrl}/docs`);
    for (const { operationId, operation } of operationsOf(partnerDocument)) {
      const section = page.locator(`[id="operation/${operationId}"]`);
      await section.waitFor({ timeout: 30_000 });
      expect(await section.locator('h2').first().innerText()).to.equal(operation.summary);
    }
    const webhook = partnerDocument.webhooks?.reportPublished?.post;
    expect(webhook?.summary).to.be.a('string');
    await page.getByRole('heading', { name: webhook!.summary! }).first().waitFor({ timeout: 10_000 });
    expect(foreign, 'requests to other origins').to.deep.equal([]);
    expect(problems, 'console errors (CSP violations among them)').to.deep.equal([]);
    await page.close();
  });
});
