import { expect } from 'chai';
import { createCompany } from '../../src/companies/index.js';
import { api, APP_TOKEN, newCompany, pool, unique } from '../support/harness.js';
import { consoleClient, signIn } from '../support/console.js';

const HOSTILE = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>'];

/** The message the application API gives for this input, to compare the console's with. */
async function apiError(url: string, body: object, status: number): Promise<string> {
  const res = await api().post(url).set('Authorization', `Bearer ${APP_TOKEN}`).send(body).expect(status);
  return (res.body as { error: string }).error;
}

describe('console: companies and their inspectors', () => {
  it('creates a company ("Create company", "Name") and goes to its page (303), listed newest first', async () => {
    const { cookie, csrf } = await signIn();
    const [first, second] = [unique('older'), unique('newer')];
    for (const name of [first, second]) {
      const res = await consoleClient()
        .post('/console/companies')
        .set('Cookie', cookie)
        .type('form')
        .send({ _csrf: csrf, name })
        .expect(303);
      expect(res.headers.location).to.match(/^\/console\/companies\/[0-9a-f-]{36}$/);
    }
    const list = await consoleClient().get('/console/companies').set('Cookie', cookie).expect(200);
    expect(list.text).to.include('<button type="submit">Create company</button>');
    expect(list.text.indexOf(second)).to.be.within(0, list.text.indexOf(first));
  });

  it('pages the list: "Older companies" leads to the next page, which goes on where the first ends', async () => {
    // More companies than a page holds, whatever else the other test files make meanwhile.
    const made = new Set<string>();
    for (let i = 0; i < 21; i++) made.add((await createCompany(pool(), unique('paged'))).id);
    const { cookie } = await signIn();
    const seen = new Set<string>();
    let url: string | undefined = '/console/companies';
    while (url && [...made].some((id) => !seen.has(id))) {
      const page: { text: string } = await consoleClient().get(url).set('Cookie', cookie).expect(200);
      const ids = [...page.text.matchAll(/href="\/console\/companies\/([0-9a-f-]{36})"/g)].map((m) => m[1]!);
      expect(ids.length).to.be.within(1, 20);
      for (const id of ids) expect(seen.has(id), `${id} twice`).to.equal(false);
      ids.forEach((id) => seen.add(id));
      url = /href="(\/console\/companies\?after=[0-9a-f-]{36})"/.exec(page.text)?.[1];
    }
    expect([...made].filter((id) => !seen.has(id))).to.deep.equal([]);
  });

  it('pages back: "Newer companies" from a later page shows the page before it, and says more follow', async () => {
    for (let i = 0; i < 21; i++) await createCompany(pool(), unique('back'));
    const { cookie } = await signIn();
    const get = async (url: string) => (await consoleClient().get(url).set('Cookie', cookie).expect(200)).text;
    const idsOf = (text: string) =>
      [...text.matchAll(/href="\/console\/companies\/([0-9a-f-]{36})"/g)].map((m) => m[1]!);
    const first = await get('/console/companies');
    expect(first).to.include('More companies than this page').and.not.include('Newer companies');
    const older = /href="(\/console\/companies\?after=[0-9a-f-]{36})"/.exec(first)![1]!;
    const second = await get(older);
    const newer = /href="(\/console\/companies\?before=[0-9a-f-]{36})"/.exec(second)![1]!;
    expect(idsOf(await get(newer))).to.deep.equal(idsOf(first));
  });

  it('shows an empty name at the field with the API’s message and status (400), the form kept', async () => {
    const { cookie, csrf } = await signIn();
    const res = await consoleClient()
      .post('/console/companies')
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: csrf, name: '' });
    expect(res.status).to.equal(400);
    const message = await apiError('/internal/companies', { name: '' }, 400);
    expect(res.text).to.include(`<p id="company-name-error" class="field-error">${message}</p>`);
    expect(res.text).to.include('aria-invalid="true" aria-describedby="company-name-error"');
  });

  it('adds an inspector ("Add inspector", "Name", "E-mail"); a second with the e-mail: 409 at the field, the API’s words', async () => {
    const { companyId } = await newCompany();
    const { cookie, csrf } = await signIn();
    const inspector = { name: 'Dana Inspector', email: `${unique('dana')}@example.com` };
    const add = (fields: object) =>
      consoleClient()
        .post(`/console/companies/${companyId}/inspectors`)
        .set('Cookie', cookie)
        .type('form')
        .send({ _csrf: csrf, ...fields });
    await add(inspector).expect(303).expect('Location', `/console/companies/${companyId}`);
    const page = await consoleClient().get(`/console/companies/${companyId}`).set('Cookie', cookie).expect(200);
    expect(page.text).to.include(`Dana Inspector (${inspector.email})`);
    expect(page.text).to.include('<button type="submit">Add inspector</button>');
    expect(page.text).to.include('<label for="inspector-email">E-mail</label>');

    const upper = inspector.email.toUpperCase();
    const again = await add({ name: 'Another', email: upper });
    expect(again.status).to.equal(409);
    const message = await apiError(`/internal/companies/${companyId}/users`, { name: 'x', email: upper }, 409);
    expect(again.text).to.include(`<p id="inspector-email-error" class="field-error">${message}</p>`);
    expect(again.text).to.include('aria-describedby="inspector-email-error"');

    const bad = await add({ name: 'Lee', email: 'not-an-address' });
    expect(bad.status).to.equal(400);
    const badMessage = await apiError(`/internal/companies/${companyId}/users`, { name: 'Lee', email: 'x' }, 400);
    expect(bad.text).to.include(`<p id="inspector-email-error" class="field-error">${badMessage}</p>`);
  });

  it('links a company’s page to its "REST API" settings and its "Reports"', async () => {
    const { companyId } = await newCompany();
    const { cookie } = await signIn();
    const page = await consoleClient().get(`/console/companies/${companyId}`).set('Cookie', cookie).expect(200);
    expect(page.text).to.include(`<a href="/console/companies/${companyId}/integrations/rest-api">REST API</a>`);
    expect(page.text).to.include(`<a href="/console/companies/${companyId}/reports">Reports</a>`);
  });

  it('answers an unknown company and an unknown page with the HTML 404 page', async () => {
    const { cookie } = await signIn();
    for (const path of [
      '/console/companies/5b0c6e2e-0000-4000-8000-000000000000',
      '/console/companies/nope',
      '/console/nowhere',
    ]) {
      const res = await consoleClient().get(path).set('Cookie', cookie).expect(404);
      expect(res.headers['content-type']).to.match(/^text\/html/);
      expect(res.text).to.include('<h1>Not found</h1>');
    }
  });

  for (const hostile of HOSTILE) {
    it(`shows a company and an inspector named ${hostile} as text`, async () => {
      const { cookie, csrf } = await signIn();
      const created = await consoleClient()
        .post('/console/companies')
        .set('Cookie', cookie)
        .type('form')
        .send({ _csrf: csrf, name: hostile })
        .expect(303);
      const companyPath = created.headers.location as string;
      await consoleClient()
        .post(`${companyPath}/inspectors`)
        .set('Cookie', cookie)
        .type('form')
        .send({ _csrf: csrf, name: hostile, email: `${unique('h')}@example.com` })
        .expect(303);
      const pages = [await consoleClient().get(companyPath).set('Cookie', cookie).expect(200)];
      pages.push(await consoleClient().get('/console/companies').set('Cookie', cookie).expect(200));
      for (const { text } of pages) {
        expect(text).not.to.include('<script>alert');
        expect(text).not.to.include('<img');
        expect(text).to.include(hostile.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('"', '&quot;'));
      }
    });
  }
});
