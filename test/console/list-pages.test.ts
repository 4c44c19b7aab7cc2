import { expect } from 'chai';
import { createKey } from '../../src/integrations/index.js';
import { newCompany, newTestKey, pool } from '../support/harness.js';
import { consoleClient, signIn } from '../support/console.js';

/**
 * The Users page's people and open invitations, and the REST API page's keys, each a page at a time both
 * ways: walked down to the end and back up, every row once and in order, a line saying whether more
 * follow; a cursor that is no row of the company's list shows its first page.
 */

type Get = (url: string) => Promise<string>;

/** The address of the link with this text, if the page has one. */
const linkTo = (html: string, text: string) =>
  new RegExp(`<a href="([^"]+)">${text}</a>`).exec(html)?.[1]?.replaceAll('&amp;', '&');

/** The pages met following `down` links from `url` to the end, and those met following `up` links back. */
async function walk(get: Get, url: string, rowsOf: (html: string) => string[], [up, down]: [string, string]) {
  let html = await get(url);
  const downwards = [rowsOf(html)];
  for (let next = linkTo(html, down); next && downwards.length < 10; next = linkTo(html, down)) {
    html = await get(next);
    downwards.push(rowsOf(html));
  }
  const upwards = [rowsOf(html)];
  for (let next = linkTo(html, up); next && upwards.length < 10; next = linkTo(html, up)) {
    html = await get(next);
    upwards.push(rowsOf(html));
  }
  return { downwards, upwards };
}

/** Every row once, in the list's order, on pages of `size`; the same pages walking back. */
function expectWalked(
  { downwards, upwards }: { downwards: string[][]; upwards: string[][] },
  all: string[],
  size = 20,
) {
  expect(downwards.flat()).to.deep.equal(all);
  expect(downwards.map((rows) => rows.length)).to.deep.equal(
    Array.from({ length: Math.ceil(all.length / size) }, (_, i) => Math.min(size, all.length - i * size)),
  );
  expect([...upwards].reverse()).to.deep.equal(downwards);
}

async function operator(): Promise<Get> {
  const { cookie } = await signIn();
  return async (url) => (await consoleClient().get(url).set('Cookie', cookie).expect(200)).text;
}

/** n people of the company named "Pat 01" …, and n open invitations, the newest "inv-01". */
async function peopleAndInvitations(companyId: string, n: number): Promise<void> {
  await pool().query(
    `INSERT INTO users (company_id, name, email)
     SELECT $1, 'Pat ' || lpad(k::text, 2, '0'), 'pat-' || k || '@example.com' FROM generate_series(1, $2) AS k`,
    [companyId, n],
  );
  await pool().query(
    `INSERT INTO user_invitations (company_id, email, role, token_hash, created_at, expires_at)
     SELECT $1, 'inv-' || lpad(k::text, 2, '0') || '@example.com', 'inspector', decode(md5(random()::text), 'hex'),
            now() - k * interval '1 second', now() + interval '1 day'
       FROM generate_series(1, $2) AS k`,
    [companyId, n],
  );
}

const peopleOf = (html: string) => [...html.matchAll(/<th scope="row">(Pat \d+)<\/th>/g)].map((m) => m[1]!);
const invitationsOf = (html: string) => [...html.matchAll(/(inv-\d+)@example\.com \(/g)].map((m) => m[1]!);
const keysOf = (html: string) => [...html.matchAll(/<code>(irk_[^<…]+)…<\/code>/g)].map((m) => m[1]!);
const numbered = (label: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${label}${String(i + 1).padStart(2, '0')}`);

describe('console: lists a page at a time both ways', () => {
  it('pages the people by name and the open invitations newest first, each keeping the other’s place', async () => {
    const { companyId } = await newCompany();
    await peopleAndInvitations(companyId, 45);
    const get = await operator();
    const users = `/console/companies/${companyId}/users`;

    const first = await get(users);
    expect(first).to.include('More people than this page').and.include('More invitations than this page');
    expect(first).not.to.include('Previous people').and.not.include('Newer invitations');
    expectWalked(await walk(get, users, peopleOf, ['Previous people', 'Next people']), numbered('Pat ', 45));
    expectWalked(
      await walk(get, users, invitationsOf, ['Newer invitations', 'Older invitations']),
      numbered('inv-', 45),
    );

    // The invitations' links keep the people's page.
    const second = await get(linkTo(first, 'Next people')!);
    const both = await get(linkTo(second, 'Older invitations')!);
    expect(peopleOf(both)).to.deep.equal(peopleOf(second));
    expect(invitationsOf(both)).to.deep.equal(numbered('inv-', 40).slice(20));
  });

  it('says every row is on the page when they are, with no links', async () => {
    const { companyId } = await newCompany();
    await peopleAndInvitations(companyId, 3);
    const page = await (await operator())(`/console/companies/${companyId}/users`);
    expect(peopleOf(page)).to.deep.equal(numbered('Pat ', 3));
    expect(page).to.include('Every person is on this page.').and.include('Every invitation is on this page.');
    expect(page).not.to.match(/(Previous|Next) people|(Newer|Older) invitations/);
  });

  it('pages the API keys of both worlds newest first', async () => {
    const { companyId } = await newCompany();
    await newTestKey(companyId);
    for (let i = 0; i < 23; i++) await createKey(pool(), companyId, i % 4 === 0 ? 'test' : 'live');
    const { rows } = await pool().query<{ prefix: string }>(
      `SELECT prefix FROM api_keys WHERE company_id IN (SELECT id FROM companies WHERE id = $1 OR sandbox_of = $1)
        ORDER BY created_at DESC, id DESC`,
      [companyId],
    );
    expect(rows).to.have.length(25);
    const get = await operator();
    const page = `/console/companies/${companyId}/integrations/rest-api`;
    expect(await get(page)).to.include('More keys than this page');
    const walked = await walk(get, page, keysOf, ['Newer keys', 'Older keys']);
    expectWalked(
      walked,
      rows.map((row) => row.prefix),
    );
    const { companyId: small } = await newCompany();
    expect(await get(`/console/companies/${small}/integrations/rest-api`)).to.include('Every key is on this page.');
  });

  it('shows the first page for a cursor of another company’s list, or one that is no id', async () => {
    const [{ companyId: ours }, { companyId: theirs }] = await Promise.all([newCompany(), newCompany()]);
    await Promise.all([peopleAndInvitations(ours, 25), peopleAndInvitations(theirs, 25)]);
    for (let i = 0; i < 24; i++) await createKey(pool(), theirs);
    const get = await operator();
    const theirPeople = await get(`/console/companies/${theirs}/users`);
    const theirKeys = await get(`/console/companies/${theirs}/integrations/rest-api`);
    const ourUsers = `/console/companies/${ours}/users`;
    const ourFirst = await get(ourUsers);
    const ourKeys = `/console/companies/${ours}/integrations/rest-api`;
    const ourKey = keysOf(await get(ourKeys));
    const cursors = [
      ...['Next people', 'Older invitations'].map((text) => linkTo(theirPeople, text)!.split('?')[1]!.split('#')[0]!),
      'peopleAfter=not-an-id',
      'invitationsBefore=00000000-0000-0000-0000-000000000000',
    ];
    for (const query of cursors) {
      const page = await get(`${ourUsers}?${query}`);
      expect(peopleOf(page), query).to.deep.equal(peopleOf(ourFirst));
      expect(invitationsOf(page), query).to.deep.equal(invitationsOf(ourFirst));
    }
    const theirCursor = linkTo(theirKeys, 'Older keys')!.split('?')[1]!.split('#')[0]!;
    for (const query of [theirCursor, theirCursor.replace('keysAfter', 'keysBefore'), 'keysAfter=x']) {
      expect(keysOf(await get(`${ourKeys}?${query}`)), query).to.deep.equal(ourKey);
    }
  });
});
