import { expect } from 'chai';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app.js';
import { listen } from '../../src/platform/http/listen.js';
import { appDeps, pool } from '../support/harness.js';
import { signIn } from '../support/console.js';
import { converse, lastAnswer } from '../support/raw-http.js';

const LIMIT = 64 * 1024;
/** Far less than a body of these sizes would take to arrive, had the server waited for it. */
const ANSWERED_WITHIN_MS = 2_000;

/** A form's body that never arrives in full: the server must answer without it, and close the connection. */
describe('console: a form over 64 KiB is refused before its body is read', () => {
  let server: Server;
  let port: number;

  before(async () => {
    server = await listen(createApp(appDeps(pool())), 0, '127.0.0.1', { requestTimeoutMs: 30_000 });
    port = (server.address() as AddressInfo).port;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const head = (path: string, headers: Record<string, string>) =>
    `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
    `${Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('')}\r\n`;

  /** The one answer to what was sent, given at once, with Connection: close and the connection closed. */
  async function refusedAtOnce(sent: string) {
    const { text, closed, ms } = await converse(port, sent, { waitMs: 5_000 });
    const res = lastAnswer(text, ms);
    expect(text.match(/HTTP\/1\.1 \d{3} /g), 'answers sent').to.deep.equal(['HTTP/1.1 413 ']);
    expect(res.headers.connection).to.equal('close');
    expect(res.headers['content-type']).to.match(/^text\/html/);
    expect(res.body).to.include('<h1>Too large</h1>');
    expect(closed, 'closed by the server').to.equal(true);
    expect(ms).to.be.below(ANSWERED_WITHIN_MS);
  }

  it('answers a 200 MiB Content-Length with 413 before the body is sent, signed in or not', async () => {
    const { cookie } = await signIn();
    const huge = String(200 * 1024 * 1024);
    await refusedAtOnce(`${head('/console/sign-in', { 'Content-Length': huge })}token=`);
    await refusedAtOnce(`${head('/console/companies', { 'Content-Length': huge, Cookie: cookie })}_csrf=`);
    // A stalled 10 MiB form holds nothing: the answer comes while its body never does.
    await refusedAtOnce(head('/console/sign-in', { 'Content-Length': String(10 * 1024 * 1024) }));
  });

  it('cuts a chunked form at 64 KiB: 413 once past it, the rest never read', async () => {
    const chunk = `${(LIMIT + 1).toString(16)}\r\ntoken=${'a'.repeat(LIMIT + 1 - 'token='.length)}\r\n`;
    // No last chunk: a server reading on would wait for the rest until its request timeout (30 s).
    await refusedAtOnce(`${head('/console/sign-in', { 'Transfer-Encoding': 'chunked' })}${chunk}`);
  });

  it('reads a chunked form under the limit', async () => {
    const body = 'token=wrong';
    const sent = `${head('/console/sign-in', { 'Transfer-Encoding': 'chunked', Connection: 'close' })}${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const { text, ms } = await converse(port, sent, { waitMs: 5_000 });
    const res = lastAnswer(text, ms);
    expect(res.status).to.equal(401);
    expect(res.body).to.include('This is not the application token.');
  });
});
