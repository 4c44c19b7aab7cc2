import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import request from 'supertest';
import { announcementProblems, breakingChanges, CHANGELOG } from '../../scripts/partner-changes.js';
import { app } from '../support/harness.js';
import { partnerDocument, type OpenApiDocument } from './support/partner-document.js';

type Versioned = OpenApiDocument & { info: { version: string; description?: string } };
const released = partnerDocument as Versioned;
const changed = (change: (doc: Versioned) => void, version = released.info.version): Versioned => {
  const doc = structuredClone(released);
  change(doc);
  doc.info.version = version;
  return doc;
};
const operation = (doc: Versioned, path: string, method: string) =>
  doc.paths[path]![method] as { responses: Record<string, unknown>; parameters: { schema: { maximum?: number } }[] };
const schema = (doc: Versioned, name: string) =>
  doc.components!.schemas![name] as { required: string[]; properties: Record<string, object> };

describe('the gate against unannounced breaking changes (npm run partner:check)', () => {
  const breaking: [string, (doc: Versioned) => void][] = [
    ['a removed operation', (doc) => delete doc.paths['/auth']],
    ['a removed status', (doc) => delete operation(doc, '/reports/{reportId}', 'get').responses['404']],
    ['a removed output field', (doc) => delete schema(doc, 'Report').properties.yearBuilt],
    ['a new required input', (doc) => schema(doc, 'ReportInput').required.push('address')],
    ['a narrowed parameter', (doc) => (operation(doc, '/reports', 'get').parameters[0]!.schema.maximum = 50)],
  ];

  for (const [what, change] of breaking) {
    it(`refuses ${what} under the released version, and accepts it with a new version and its changelog entry`, () => {
      expect(breakingChanges(released, changed(change))).not.to.deep.equal([]);
      expect(announcementProblems(released, changed(change), '')[0]).to.match(/^breaking changes/);
      expect(announcementProblems(released, changed(change, '9.0.0'), '## 8.0.0\n')[0]).to.match(/has no "## 9.0.0"/);
      expect(
        announcementProblems(released, changed(change, '9.0.0'), '# Changes\n\n## 9.0.0\n\n- what\n'),
      ).to.deep.equal([]);
    });
  }

  it('lets a change that breaks nothing through without a new version', () => {
    const added = changed((doc) => {
      schema(doc, 'Report').properties.extra = { type: 'string' };
      doc.info.description = 'Reworded.';
    });
    expect(announcementProblems(released, added, '')).to.deep.equal([]);
  });

  it('serves the changelog that the document links to', async () => {
    expect(released.info.description).to.include('](/partner-changelog.md)');
    const res = await request(app())
      .get('/partner-changelog.md')
      .expect(200)
      .expect('Content-Type', /^text\/markdown/);
    expect(res.text).to.equal(readFileSync(CHANGELOG, 'utf8'));
    expect(res.text).to.include(`## ${released.info.version}`);
  });
});
