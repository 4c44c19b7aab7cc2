import { expect } from 'chai';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app.js';
import { listen } from '../../src/platform/http/listen.js';
import { assertMatchesContract } from '../support/contract.js';
import { appDeps, newCompany, pool } from '../support/harness.js';
import { answer } from '../support/raw-http.js';

/** A request target in absolute form (RFC 9112 §3.2.2), on a raw connection: supertest sends only paths. */
describe('a request target in absolute form', () => {
  let server: Server;
  let port: number;

  before(async () => {
    server = await listen(createApp(appDeps(pool())), 0, '127.0.0.1');
    port = (server.address() as AddressInfo).port;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const get = (target: string, headers = '') =>
    answer(port, `GET ${target} HTTP/1.1\r\nHost: elsewhere.example\r\n${headers}Connection: close\r\n\r\n`, {
      waitMs: 5_000,
    });

  it('is served as its path and query', async () => {
    const { key } = await newCompany();
    const auth = await get(`http://127.0.0.1:${port}/auth`, `X-API-KEY: ${key}\r\n`);
    expect(auth.status, auth.body).to.equal(200);
    assertMatchesContract('get', '/auth', { ...auth, body: JSON.parse(auth.body) as unknown });
    const list = await get(`HTTPS://api.example.com/reports?limit=1`, `X-API-KEY: ${key}\r\n`);
    expect(list.status, list.body).to.equal(200);
    expect(JSON.parse(list.body)).to.deep.equal([]);
  });

  it('names its authority, not the Host header, as the origin the document was requested at', async () => {
    const res = await get('http://api.example.com:8080/openapi.json');
    expect(res.status, res.body).to.equal(200);
    const { servers } = JSON.parse(res.body) as { servers: { url: string }[] };
    expect(servers.map((s) => s.url)).to.deep.equal(['http://api.example.com:8080']);
  });

  it('is refused with 400 when its scheme is not http or https, or it names no host', async () => {
    for (const [target, error] of [
      ['ftp://127.0.0.1/auth', 'the request target must be a path, or an http or https URL: ftp://127.0.0.1/auth'],
      ['http:///auth', 'the request target must be a path, or an http or https URL: http:///auth'],
      [
        'http://user@127.0.0.1/auth',
        'the request target must be a path, or an http or https URL: http://user@127.0.0.1/auth',
      ],
    ]) {
      const res = await get(target!);
      expect(res.status, target).to.equal(400);
      expect(JSON.parse(res.body), target).to.deep.equal({ error });
      expect(res.headers.connection, target).to.equal('close');
      assertMatchesContract('get', '/auth', { ...res, body: JSON.parse(res.body) as unknown });
    }
  });
});
