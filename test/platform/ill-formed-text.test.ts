import { expect } from 'chai';
import type { Test } from 'supertest';
import { APP_TOKEN, api, newCompany, pool, reportInput, unique, type TestCompany } from '../support/harness.js';

const ILL_FORMED = 'must be well-formed Unicode text (no invalid UTF-8, no lone surrogate such as \\ud800)';

/** A JSON body as bytes: the parts in order, strings as UTF-8 and byte arrays as they are. */
const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

/** Sends the bytes as they are, as a JSON body (superagent would otherwise serialise a Buffer as JSON). */
const sendBytes = (test: Test, body: Buffer) =>
  test
    .set('Content-Type', 'application/json')
    .serialize((raw: unknown) => raw as string)
    .send(body);

describe('text that is not well-formed Unicode', () => {
  let company: TestCompany;
  before(async () => {
    company = await newCompany([{ name: 'Dana Inspector', email: 'dana@example.com' }]);
  });
  const count = async () =>
    Number(
      (await pool().query('SELECT count(*) FROM reports WHERE company_id = $1', [company.companyId])).rows[0].count,
    );
  const create = () => api().post('/reports/new').set('X-API-KEY', company.key);

  it('refuses lone surrogates in any field with 400 naming it, and stores nothing', async () => {
    const before = await count();
    for (const [body, field] of [
      [reportInput({ restId: '\ud800zz' }), 'restId'],
      [reportInput({ restId: '\udbffzz' }), 'restId'],
      [reportInput({ clientNames: ['Jordan', 'Casey \udc00'] }), 'clientNames[1]'],
      [reportInput({ notes: 'x'.repeat(1000) + '\ud83d' }), 'notes'],
      [reportInput({ address: '\ude00\ud83d' }), 'address'], // a pair in the wrong order is two lone halves
      [reportInput({ invoiceItems: ['Radon \ud800: $150'] }), 'invoiceItems[0]'],
    ] as const) {
      const res = await create().send(body).expect(400);
      expect(res.body).to.deep.equal({ error: `${field} ${ILL_FORMED}` });
    }
    // As the JSON escape itself, not only as the character JSON.stringify escapes.
    const escaped = await create()
      .set('Content-Type', 'application/json')
      .send('{"clientNames": "A", "inspectionDate": "2026-03-14", "agentName": "\\udbff"}')
      .expect(400);
    expect(escaped.body).to.deep.equal({ error: `agentName ${ILL_FORMED}` });
    expect(await count()).to.equal(before);
  });

  it('refuses bytes that are not UTF-8 in the raw body with 400 naming the field, before they become U+FFFD', async () => {
    const before = await count();
    const send = (body: Buffer) => sendBytes(create(), body).expect(400);
    const cases: [Buffer, string][] = [
      // "Müller" in Latin-1 and the bytes FF FE C3: none of them UTF-8.
      [bytes('{"clientNames": "M', [0xfc, 0xff, 0xfe, 0xc3], 'ller", "inspectionDate": "2026-03-14"}'), 'clientNames'],
      [bytes('{"clientNames": "A", "inspectionDate": "2026-03-14", "notes": "', [0xc3], '"}'), 'notes'],
      // An encoded surrogate (ED A0 80), an overlong "/" (C0 AF), past U+10FFFF (F4 90 80 80).
      [bytes('{"clientNames": ["A", "', [0xed, 0xa0, 0x80], '"], "inspectionDate": "2026-03-14"}'), 'clientNames[1]'],
      [bytes('{"clientNames": "A", "inspectionDate": "2026-03-14", "address": "', [0xc0, 0xaf], '"}'), 'address'],
      [
        bytes('{"clientNames": "A", "restId": "', [0xf4, 0x90, 0x80, 0x80], '", "inspectionDate": "2026-03-14"}'),
        'restId',
      ],
      [bytes('{"clientNames": "A", "inspectionDate": "2026-03-14", "n', [0xff], 'tes": "x"}'), 'field name n\ufffdtes'],
    ];
    for (const [body, field] of cases) {
      expect((await send(body)).body, field).to.deep.equal({ error: `${field} ${ILL_FORMED}` });
    }
    // Invalid bytes outside any string are a JSON error; a field given twice still names the body.
    expect((await send(bytes('{"clientNames": "A"', [0xff], '}'))).body).to.deep.equal({
      error: 'the body is not valid JSON',
    });
    const twice = bytes('{"clientNames": "', [0xff], '", "clientNames": "A", "inspectionDate": "2026-03-14"}');
    expect((await send(twice)).body).to.deep.equal({ error: 'the body is not well-formed UTF-8' });
    expect(await count()).to.equal(before);
  });

  it('keeps well-formed text exactly: two-byte, three-byte, astral characters and a real U+FFFD', async () => {
    const restId = unique('text');
    const text = 'Müller – 東京 😀 \ufffd';
    await sendBytes(
      create(),
      Buffer.from(JSON.stringify(reportInput({ restId, clientNames: text, notes: '\ud83d\ude00' }))),
    ).expect(200);
    const res = await api()
      .get(`/reports?restId=${encodeURIComponent(restId)}`)
      .set('X-API-KEY', company.key)
      .expect(200);
    expect(res.body[0]).to.include({ clientName: text, inspectorNotes: '😀', restId });
  });

  it('refuses query parameters whose escapes are not UTF-8, naming them', async () => {
    const list = (query: string) => api().get(`/reports?${query}`).set('X-API-KEY', company.key);
    for (const [query, name] of [
      ['restId=%FF', 'restId'],
      ['restId=M%FCller', 'restId'],
      ['restId=%ED%A0%80', 'restId'], // an encoded surrogate
      ['limit=5&after=%C3', 'after'],
      ['restId=%00', 'restId'],
    ]) {
      const res = await list(query!).expect(400);
      expect(res.body.error, query).to.match(new RegExp(`^${name} must `));
    }
    expect((await list('r%FFstId=x').expect(400)).body).to.deep.equal({ error: `query parameter names ${ILL_FORMED}` });
    // Well-formed escapes, and a "%" that starts no escape, are read as before.
    await list('restId=M%C3%BCller%20%F0%9F%98%80').expect(200);
    await list('restId=100%25').expect(200);
    await list('restId=50%off').expect(200);
  });

  it('answers the usual 404 for path ids that are not UTF-8', async () => {
    for (const id of ['%FF', '%ED%A0%80', 'M%FCller']) {
      await api()
        .get(`/reports/${id}`)
        .set('X-API-KEY', company.key)
        .expect(404)
        .expect((res) => expect(res.body.error).to.match(/^report .* not found$/));
    }
  });

  it('refuses ill-formed text in the application API too', async () => {
    const res = await api()
      .post('/internal/companies')
      .set('Authorization', `Bearer ${APP_TOKEN}`)
      .send({ name: 'Acme \ud800' })
      .expect(400);
    expect(res.body).to.deep.equal({ error: `name ${ILL_FORMED}` });
    const raw = await sendBytes(
      api().post('/internal/companies').set('Authorization', `Bearer ${APP_TOKEN}`),
      bytes('{"name": "Acme ', [0xe2, 0x82], '"}'),
    ).expect(400);
    expect(raw.body).to.deep.equal({ error: `name ${ILL_FORMED}` });
  });
});
