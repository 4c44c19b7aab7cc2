import { expect } from 'chai';
import zlib from 'node:zlib';
import request, { type Test } from 'supertest';
import { MAX_JSON_DEPTH } from '../../src/platform/http/json-body.js';
import { api, app, APP_TOKEN, newCompany, reportInput } from '../support/harness.js';

const appAuth = `Bearer ${APP_TOKEN}`;
const TOO_DEEP = { error: `the body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep` };
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** Sends these bytes as they are (superagent would serialise a Buffer sent as JSON into {"type": "Buffer", …}). */
const sendBytes = (test: Test, body: Buffer) =>
  test.serialize((bytes: Buffer) => bytes as unknown as string).send(body);

describe('request body budgets', () => {
  describe('nesting', () => {
    it('refuses a body nested 100,000 deep with 400, on any path, with or without a key', async () => {
      const { key } = await newCompany();
      const deep = `{"clientNames": ${nested(100_000)}}`;
      for (const call of [
        // Not api(): the body is refused before the path is looked up, so an unknown path gets the 400 too.
        request(app()).post('/nope'),
        api().post('/reports/new').set('X-API-KEY', key),
        api().post('/internal/companies').set('Authorization', appAuth),
      ]) {
        const res = await call.type('json').send(deep).expect(400);
        expect(res.body).to.deep.equal(TOO_DEEP);
      }
    });

    it(`reads a body nested ${MAX_JSON_DEPTH} deep and refuses one level more`, async () => {
      const body = (depth: number) => `{"name": "Acme", "extra": ${nested(depth - 1)}}`;
      const within = await api()
        .post('/internal/companies')
        .set('Authorization', appAuth)
        .type('json')
        .send(body(MAX_JSON_DEPTH))
        .expect(400);
      expect(within.body).to.deep.equal({ error: 'unknown field: extra' });
      const over = await api()
        .post('/internal/companies')
        .set('Authorization', appAuth)
        .type('json')
        .send(body(MAX_JSON_DEPTH + 1))
        .expect(400);
      expect(over.body).to.deep.equal(TOO_DEEP);
    });

    it('does not count brackets inside strings, escaped quotes included', async () => {
      const name = `\\"${'[{'.repeat(100)} \\\\`;
      const res = await api()
        .post('/internal/companies')
        .set('Authorization', appAuth)
        .type('json')
        .send(`{"name": "${name}"}`)
        .expect(201);
      expect(res.body.name).to.equal(JSON.parse(`"${name}"`));
    });

    it('refuses a body in another charset than UTF-8 with 415', async () => {
      const res = await sendBytes(
        api()
          .post('/internal/companies')
          .set('Authorization', appAuth)
          .set('Content-Type', 'application/json; charset=utf-16le'),
        Buffer.from('{"name": "Acme"}', 'utf16le'),
      ).expect(415);
      expect(res.body).to.deep.equal({ error: 'unsupported body encoding: send UTF-8 JSON' });
    });
  });

  describe('decoding', () => {
    const create = async (body: Buffer, status: number) => {
      const { key } = await newCompany();
      const post = api().post('/reports/new').set('X-API-KEY', key).set('Content-Type', 'application/json');
      const res = await sendBytes(post, body).expect(status);
      if (status !== 200) return res;
      return api().get(`/reports/${res.body.id}`).set('X-API-KEY', key).expect(200);
    };

    it('reads a large body of text beyond ASCII exactly as sent (two-, three- and four-byte characters)', async () => {
      // Over 16 KiB, so the body is decoded by transcoding rather than by V8's decoder.
      const notes = `é漢😀 ${'ñ字𝄞'.repeat(20_000)} end`;
      const res = await create(Buffer.from(JSON.stringify(reportInput({ notes }))), 200);
      expect(res.body.inspectorNotes).to.equal(notes);
    });

    it('skips a leading byte order mark, as JSON readers may', async () => {
      for (const notes of ['short', 'ü'.repeat(20_000)]) {
        const bom = Buffer.from([0xef, 0xbb, 0xbf]);
        const res = await create(Buffer.concat([bom, Buffer.from(JSON.stringify(reportInput({ notes })))]), 200);
        expect(res.body.inspectorNotes).to.equal(notes);
      }
    });

    it('refuses with 400 a large body that is not valid JSON, or not an object or array at the top', async () => {
      for (const body of [`{"notes": "${'ü'.repeat(20_000)}"`, `  "${'ü'.repeat(20_000)}"`, ' \n 42', ' \r\n\t ']) {
        const res = await create(Buffer.from(body), 400);
        expect(res.body).to.deep.equal({ error: 'the body is not valid JSON' });
      }
      // Bytes that are not UTF-8, in a body that is not JSON either.
      const notUtf8 = Buffer.concat([Buffer.from(`{"notes": "${'ü'.repeat(20_000)}`), Buffer.from([0xff, 0xc0])]);
      const res = await create(notUtf8, 400);
      expect(res.body).to.deep.equal({ error: 'the body is not valid JSON' });
    });

    it('reads a charset named in any case as UTF-8, and refuses an empty one with 415', async () => {
      const post = (type: string) =>
        sendBytes(
          api().post('/internal/companies').set('Authorization', appAuth).set('Content-Type', type),
          Buffer.from('{"name": "Acme"}'),
        );
      await post('application/json; charset=UTF-8').expect(201);
      const res = await post('application/json; charset=').expect(415);
      expect(res.body).to.deep.equal({ error: 'unsupported body encoding: send UTF-8 JSON' });
    });
  });

  describe('Content-Encoding', () => {
    const report = JSON.stringify(reportInput());
    const post = async (encoding: string, body: Buffer) => {
      const { key } = await newCompany();
      return sendBytes(
        api()
          .post('/reports/new')
          .set('X-API-KEY', key)
          .set('Content-Type', 'application/json')
          .set('Content-Encoding', encoding),
        body,
      );
    };

    it('reads gzip, deflate and br bodies', async () => {
      for (const [encoding, body] of [
        ['gzip', zlib.gzipSync(report)],
        ['deflate', zlib.deflateSync(report)],
        ['br', zlib.brotliCompressSync(report)],
      ] as const) {
        const res = await post(encoding, body);
        expect(res.status, `${encoding}: ${res.text}`).to.equal(200);
        expect(res.body.result).to.equal('ok');
      }
    });

    it('refuses with 400 a body that is not what its Content-Encoding says, or is cut short', async () => {
      const gzip = zlib.gzipSync(report);
      const br = zlib.brotliCompressSync(report);
      for (const [encoding, body] of [
        ['gzip', Buffer.from(report)],
        ['gzip', gzip.subarray(0, gzip.length - 8)],
        ['deflate', Buffer.from(report)],
        ['br', Buffer.from(report)],
        ['br', br.subarray(0, br.length - 4)],
      ] as const) {
        const res = await post(encoding, body);
        expect(res.status, `${encoding} of ${body.length} bytes`).to.equal(400);
        expect(res.body).to.deep.equal({
          error: 'the body does not decode as its Content-Encoding says (corrupt or cut short)',
        });
      }
    });

    it('refuses another Content-Encoding with 415', async () => {
      const res = await post('compress', Buffer.from(report));
      expect(res.status).to.equal(415);
      expect(res.body).to.deep.equal({ error: 'unsupported Content-Encoding: send gzip, deflate, br or none' });
    });

    it('applies the 1 MiB limit to the decompressed body: a gzip bomb is 413', async () => {
      const notes = (size: number) => JSON.stringify(reportInput({ notes: 'n'.repeat(size) }));
      // 8 KiB that inflate to eight times the limit: the service must stop inflating at 1 MiB.
      const bomb = zlib.gzipSync(notes(8 * 1024 * 1024));
      expect(bomb.length).to.be.below(10 * 1024);
      const res = await post('gzip', bomb);
      expect(res.status, res.text).to.equal(413);
      expect(res.body).to.deep.equal({ error: 'request body is larger than 1 MiB' });
      // Just within the limit once inflated, the body is read (and refused by the schema: notes ≤ 100,000).
      const within = await post('gzip', zlib.gzipSync(notes(1024 * 1024 - 200)));
      expect(within.status).to.equal(400);
      expect(within.body.error).to.match(/^notes /);
    });
  });

  describe('methods whose operations take no body', () => {
    const oversized = JSON.stringify({ filler: 'x'.repeat(2 * 1024 * 1024) });

    it('leaves a body sent with GET or DELETE unread: no 413, 415 or 400 those operations do not declare', async () => {
      const { key } = await newCompany();
      const created = await api().post('/reports/new').set('X-API-KEY', key).send(reportInput()).expect(200);
      const reportId = created.body.id as string;
      for (const body of [oversized, '{not json', nested(100_000)]) {
        await api().get('/reports').set('X-API-KEY', key).type('json').send(body).expect(200);
        await api().get(`/reports/${reportId}`).set('X-API-KEY', key).type('json').send(body).expect(200);
      }
      await sendBytes(
        api().get('/auth').set('X-API-KEY', key).set('Content-Encoding', 'compress').type('json'),
        Buffer.from('{}'),
      ).expect(200);
      const company = await api().post('/internal/companies').set('Authorization', appAuth).send({ name: 'Acme' });
      await api()
        .delete(`/internal/companies/${company.body.id}/integration`)
        .set('Authorization', appAuth)
        .type('json')
        .send(oversized)
        .expect(204);
    });

    it('reads and ignores a JSON body sent to a POST without one, refusing what breaks the body budgets as declared', async () => {
      const company = await api().post('/internal/companies').set('Authorization', appAuth).send({ name: 'Acme' });
      // Starting a report takes no body (creating an API key now takes an optional one: its mode).
      const report = await api()
        .post(`/internal/companies/${company.body.id}/reports`)
        .set('Authorization', appAuth)
        .send(reportInput())
        .expect(201);
      const start = `/internal/companies/${company.body.id}/reports/${report.body.id}/start`;
      await api().post(start).set('Authorization', appAuth).send({ ignored: true }).expect(200);
      const tooLarge = await api().post(start).set('Authorization', appAuth).type('json').send(oversized).expect(413);
      expect(tooLarge.body).to.deep.equal({ error: 'request body is larger than 1 MiB' });
      const broken = await api().post(start).set('Authorization', appAuth).type('json').send('{not json').expect(400);
      expect(broken.body).to.deep.equal({ error: 'the body is not valid JSON' });
    });

    it('refuses a body that is not JSON on both starts, as create and publish do: 415, and 413 past 1 MiB', async () => {
      const company = await newCompany();
      const { body: issued } = await api()
        .post(`/internal/companies/${company.companyId}/api-keys`)
        .set('Authorization', appAuth)
        .send({ mode: 'test' })
        .expect(201);
      const { body: sandboxReport } = await api()
        .post('/reports/new')
        .set('X-API-KEY', issued.key)
        .send(reportInput())
        .expect(200);
      const { body: appReport } = await api()
        .post(`/internal/companies/${company.companyId}/reports`)
        .set('Authorization', appAuth)
        .send(reportInput())
        .expect(201);
      const starts: [path: string, auth: Record<string, string>][] = [
        [`/sandbox/reports/${sandboxReport.id}/start`, { 'X-API-KEY': issued.key }],
        [`/internal/companies/${company.companyId}/reports/${appReport.id}/start`, { Authorization: appAuth }],
      ];
      const notJson = { error: 'unsupported media type: send Content-Type: application/json' };
      for (const [path, auth] of starts) {
        for (const type of ['text/plain', 'application/xml']) {
          const res = await api().post(path).set(auth).type(type).send('<start/>').expect(415);
          expect(res.body, type).to.deep.equal(notJson);
        }
        // A body without a Content-Type is not JSON either.
        const untyped = await sendBytes(api().post(path).set(auth), Buffer.from('{}')).expect(415);
        expect(untyped.body).to.deep.equal(notJson);
        const large = await api().post(path).set(auth).type('text/plain').send('x'.repeat(1_100_000)).expect(413);
        expect(large.body).to.deep.equal({ error: 'request body is larger than 1 MiB' });
      }
      // Nothing was started by a refused body.
      await api()
        .get(`/reports/${sandboxReport.id}`)
        .set('X-API-KEY', issued.key)
        .expect(200, /"status":"new"/);
      // No body at all starts, whatever Content-Type is named: none, or an empty one.
      const [sandboxStart, appStart] = starts;
      await api().post(sandboxStart![0]).set(sandboxStart![1]).expect(200);
      await api().post(appStart![0]).set(appStart![1]).set('Content-Type', 'text/plain').send('').expect(200);
    });
  });
});
