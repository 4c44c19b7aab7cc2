import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { newCompany, pool } from '../support/harness.js';
import { consoleClient, signIn } from '../support/console.js';

/** The session's flash as the table keeps it. */
async function flashRow(cookie: string) {
  const hash = createHash('sha256')
    .update(decodeURIComponent(cookie.split('=')[1]!))
    .digest();
  const { rows } = await pool().query<{ flash_path: string | null; flash: Buffer | null }>(
    'SELECT flash_path, flash FROM console_sessions WHERE token_hash = $1',
    [hash],
  );
  return rows[0]!;
}

describe('console: the flash (what an action did, shown once by the page its redirect names)', () => {
  it('is sealed in the table, left by another page, taken by its own page once', async () => {
    const { companyId } = await newCompany();
    const { cookie, csrf } = await signIn();
    const page = `/console/companies/${companyId}/integrations/rest-api`;
    const get = (path: string) => consoleClient().get(path).set('Cookie', cookie).expect(200);
    await consoleClient()
      .post(`${page}/api-keys`)
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: csrf, mode: 'live' })
      .expect(303)
      .expect('Location', page);
    const sealed = await flashRow(cookie);
    expect(sealed.flash_path).to.equal(page);

    // Another page (another tab) leaves it; a crafted query shows nothing of it.
    expect((await get(`/console/companies/${companyId}`)).text).not.to.include('new-key');
    const shown = await get(page);
    const key = /<code id="new-key">([^<]+)<\/code>/.exec(shown.text)![1]!;
    expect(sealed.flash!.toString('latin1')).not.to.include(key);
    expect(sealed.flash!.toString('latin1')).not.to.include(key.slice(4, 20));
    expect(await flashRow(cookie)).to.deep.equal({ flash_path: null, flash: null });
    expect((await get(page)).text).not.to.include(key);
  });
});
