import { expect } from 'chai';
import { api, newCompany } from '../support/harness.js';
import { consoleClient, newPerson, signInAs } from '../support/console.js';
import { auth } from '../support/webhooks.js';
import { REVOKED_KEYS_SHOWN } from '../../src/console/rest-api-view.js';

/** The REST API page's revoked keys: the latest listed, and a line saying whether older ones are in the trail. */
describe('revoked keys on the REST API page', () => {
  async function revokeKeys(companyId: string, count: number): Promise<string[]> {
    const prefixes: string[] = [];
    for (let i = 0; i < count; i++) {
      const { body: key } = await api()
        .post(`/internal/companies/${companyId}/api-keys`)
        .set(auth)
        .send({})
        .expect(201);
      await api().delete(`/internal/companies/${companyId}/api-keys/${key.id}`).set(auth).expect(204);
      prefixes.push(key.prefix);
    }
    return prefixes;
  }

  async function revokedSection(companyId: string): Promise<string> {
    const admin = await newPerson(companyId, 'admin');
    const session = await signInAs(admin.email);
    const page = await consoleClient()
      .get(`/console/companies/${companyId}/integrations/rest-api`)
      .set('Cookie', session.cookie)
      .expect(200);
    return page.text.slice(page.text.indexOf('Revoked keys'));
  }

  it('says every revoked key is listed when they fit', async () => {
    const { companyId } = await newCompany();
    const prefixes = await revokeKeys(companyId, 2);
    const section = await revokedSection(companyId);
    for (const prefix of prefixes) expect(section).to.include(`<code>${prefix}…</code>`);
    expect(section).to.include('Every revoked key is listed.').and.not.include('Older revocations');
  });

  it('lists the latest and links to every revocation in the audit trail when there are more', async () => {
    const { companyId } = await newCompany();
    const prefixes = await revokeKeys(companyId, REVOKED_KEYS_SHOWN + 1);
    const section = await revokedSection(companyId);
    expect(section).not.to.include(`<code>${prefixes[0]}…</code>`);
    expect(section).to.include(`<code>${prefixes.at(-1)}…</code>`);
    const trail = `/console/companies/${companyId}/audit?action=key.revoked`;
    expect(section).to.include(`<a href="${trail}">every revoked key in the audit trail</a>`);
    expect(section).not.to.include('Every revoked key is listed.');
  });
});
