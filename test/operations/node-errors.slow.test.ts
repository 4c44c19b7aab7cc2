import { expect } from 'chai';
import type { Server } from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createApp } from '../../src/app.js';
import { listen } from '../../src/platform/http/listen.js';
import { assertMatchesContract } from '../support/contract.js';
import { APP_TOKEN, appDeps, newCompany, pool } from '../support/harness.js';
import { answer, converse, lastAnswer, type Answer } from '../support/raw-http.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The request timeout of this file's server: short, so that a test does not wait the real 30 s. */
const REQUEST_TIMEOUT_MS = 2_000;

function expectJsonError(res: Answer, status: number, error: string | RegExp): void {
  expect(res.status, res.body).to.equal(status);
  expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
  expect(res.headers['content-length']).to.equal(String(Buffer.byteLength(res.body)));
  expect(res.headers['x-request-id']).to.match(UUID);
  expect(res.headers.connection).to.equal('close');
  expect(res.headers['cache-control']).to.equal('no-store');
  const body = JSON.parse(res.body) as { error: string };
  expect(Object.keys(body)).to.deep.equal(['error']);
  if (typeof error === 'string') expect(body.error).to.equal(error);
  else expect(body.error).to.match(error);
}

describe("Node's own refusals", () => {
  let server: Server;
  let port: number;

  before(async () => {
    server = await listen(createApp(appDeps(pool())), 0, '127.0.0.1', { requestTimeoutMs: REQUEST_TIMEOUT_MS });
    port = (server.address() as net.AddressInfo).port;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it('answers headers over 16 KiB with 431 and a JSON error', async () => {
    const res = await answer(port, `GET /auth HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectJsonError(res, 431, 'the request headers are larger than 16 KiB');
  });

  it('answers a request it cannot frame with 400 and a JSON error naming the fault', async () => {
    const bothLengths = await answer(
      port,
      'POST /reports/new HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}',
    );
    expectJsonError(bothLengths, 400, "malformed HTTP request: Transfer-Encoding can't be present with Content-Length");
    const notHttp = await answer(port, 'HELLO\r\n\r\n');
    expectJsonError(notHttp, 400, /^malformed HTTP request/);
  });

  it('answers an Expect other than 100-continue with 417, as the contract declares', async () => {
    const { key } = await newCompany();
    // On a raw connection: Node's HTTP client sends an Expect header's request before its body is given.
    const res = await answer(port, `GET /auth HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${key}\r\nExpect: x-fancy\r\n\r\n`);
    const body: unknown = JSON.parse(res.body);
    assertMatchesContract('get', '/auth', { ...res, body, text: res.body });
    expect(res.status).to.equal(417);
    expect(body).to.deep.equal({ error: 'the Expect header is not supported: only 100-continue is' });
    expect(res.headers.connection).to.equal('close');
  });

  it('still meets Expect: 100-continue', async () => {
    const { text } = await converse(
      port,
      'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n',
    );
    expect(text).to.match(/^HTTP\/1\.1 100 Continue\r\n/);
    expect(lastAnswer(text, 0).status).to.equal(200);
  });

  it('cuts a body that trickles in at the request timeout, with 408 and a JSON error', async () => {
    // An accepted token: the body is being read when the timeout comes (a refusal would come first).
    const { text, ms } = await converse(
      port,
      `POST /internal/companies HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${APP_TOKEN}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
      { trickle: 200 },
    );
    expect(text.match(/HTTP\/1\.1 \d{3} /g)).to.deep.equal(['HTTP/1.1 408 ']);
    const res = lastAnswer(text, ms);
    expectJsonError(res, 408, `the request was not received in full within ${REQUEST_TIMEOUT_MS / 1000} s`);
    // Cut once the timeout has passed, and well before the 30 s Node's default check interval would allow.
    expect(res.ms).to.be.within(REQUEST_TIMEOUT_MS - 100, REQUEST_TIMEOUT_MS + 6_000);
  });

  it('cuts headers that trickle in at the request timeout, with 408', async () => {
    const { text, ms } = await converse(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: a', { trickle: 200 });
    const res = lastAnswer(text, ms);
    expectJsonError(res, 408, `the request was not received in full within ${REQUEST_TIMEOUT_MS / 1000} s`);
    expect(res.ms).to.be.within(REQUEST_TIMEOUT_MS - 100, REQUEST_TIMEOUT_MS + 6_000);
  });

  it('keeps an idle keep-alive connection open past the request timeout', async () => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    try {
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      for (let i = 0; i < 100 && !text.includes('{"status":"ok"}'); i++) await sleep(20);
      await sleep(REQUEST_TIMEOUT_MS + 1_500);
      expect(socket.destroyed, 'closed while idle').to.equal(false);
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await Promise.race([new Promise((resolve) => socket.once('close', resolve)), sleep(5_000)]);
      expect(text.match(/HTTP\/1\.1 200 OK\r\n/g)).to.have.length(2);
    } finally {
      socket.destroy();
    }
  });
});
