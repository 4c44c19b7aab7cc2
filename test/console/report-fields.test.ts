import { expect } from 'chai';
import { ALL_FIELDS } from '../../src/reports/index.js';
import { STATUS_LABELS } from '../../src/console/reports-inbox.js';
import { utcText } from '../../src/console/time.js';
import type { Report } from '../../src/api-types.js';
import { api, everyFieldInput, newCompany, unique } from '../support/harness.js';
import { consoleClient, signIn } from '../support/console.js';
import { auth } from '../support/webhooks.js';

/** Each output field of the report field catalogue (the one the API's reads and its sample are made from). */
const OUTPUT_FIELDS = ALL_FIELDS.flatMap(([, field]) => Object.keys(field.sample(new Date()))) as (keyof Report)[];

/** The text of each value of the page's list of fields, its markup dropped. */
function listedValues(html: string): string[] {
  const list = /<dl class="report-fields">([\s\S]*?)<\/dl>/.exec(html);
  if (!list) throw new Error('the page has no list of fields');
  return [...list[1]!.matchAll(/<dd>([\s\S]*?)<\/dd>/g)].map((m) =>
    m[1]!
      .replace(/<[^>]+>/g, '')
      .replace(/&lt;/g, '<')
      .replace(/&amp;/g, '&'),
  );
}

/** How the page may show a value of the API's: as it is, its lines, its day, or its instant to the second. */
function shownAs(value: Report[keyof Report]): string[] {
  if (Array.isArray(value)) return [value.join('\n')];
  return [value, value.slice(0, 10), ...(Number.isNaN(Date.parse(value)) ? [] : [utcText(value)])];
}

describe("console: a report's page", () => {
  it('shows every field of the report field catalogue, each with the value the API returns', async () => {
    const inspectors = ['Lee', 'Dana'].map((name) => ({ name, email: `${unique(name.toLowerCase())}@example.com` }));
    const { companyId, key } = await newCompany(inspectors);
    // Every field set: a field the page leaves out leaves its value unmatched.
    const { id } = (
      await api()
        .post('/reports/new')
        .set('X-API-KEY', key)
        .send(
          everyFieldInput(
            inspectors.map((i) => i.email),
            // Not today: the day of its creation is on the page too.
            { restId: unique('crm'), inspectionDate: '2019-05-07' },
          ),
        )
        .expect(200)
    ).body as { id: string };
    await api()
      .post(`/internal/companies/${companyId}/reports/${id}/publish`)
      .set(auth)
      .send({ publishedUrl: 'https://reports.example.com/r/fields', notifyIntegration: false })
      .expect(200);
    const report = (await api().get(`/reports/${id}`).set('X-API-KEY', key).expect(200)).body as Report;
    const { cookie } = await signIn();
    const page = await consoleClient().get(`/console/companies/${companyId}/reports/${id}`).set('Cookie', cookie);
    expect(page.status).to.equal(200);

    expect(OUTPUT_FIELDS).to.have.members(Object.keys(report));
    // The status is the page's first line, above the list.
    expect(page.text).to.include(`<p>${STATUS_LABELS[report.status]} `);
    const unmatched = listedValues(page.text);
    for (const name of OUTPUT_FIELDS.filter((field) => field !== 'status')) {
      expect(report[name], name).to.not.be.oneOf(['', undefined]);
      const at = unmatched.findIndex((text) => shownAs(report[name]).includes(text));
      expect(at, `${name} (${String(report[name])}) is shown`).to.not.equal(-1);
      unmatched.splice(at, 1);
    }
    expect(unmatched, 'values on the page that are no field of the catalogue').to.deep.equal([]);
  });
});
