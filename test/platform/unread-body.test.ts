import { expect } from 'chai';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app.js';
import { listen } from '../../src/platform/http/listen.js';
import { assertMatchesContract } from '../support/contract.js';
import { appDeps, newCompany, pool } from '../support/harness.js';
import { converse, lastAnswer } from '../support/raw-http.js';

/**
 * Short, so that the 408 Node would send for a body that never comes, after an answer already given,
 * would arrive within these tests' wait.
 */
const REQUEST_TIMEOUT_MS = 1_000;
/** Long enough for the request timeout and Node's check of it (every second) to have passed. */
const WAIT_MS = REQUEST_TIMEOUT_MS + 3_000;

/** Answers on a connection whose request announced a body and sent only part of it. */
describe('an answer given before the request body arrived in full', () => {
  let server: Server;
  let port: number;

  before(async () => {
    server = await listen(createApp(appDeps(pool())), 0, '127.0.0.1', { requestTimeoutMs: REQUEST_TIMEOUT_MS });
    port = (server.address() as AddressInfo).port;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
  });

  /**
   * Sends a request whose body is cut short, reads every answer until the server closes (or WAIT_MS),
   * and expects one answer of `status`, with Connection: close, and the connection closed by the server.
   */
  async function onlyAnswerToCutShort(
    [method, path]: [string, string],
    headers: Record<string, string>,
    length: number,
    status: number,
  ) {
    const lines = Object.entries({ Host: 'x', 'Content-Type': 'application/json', ...headers }).map(
      ([name, value]) => `${name}: ${value}\r\n`,
    );
    const { text, closed, ms } = await converse(
      port,
      `${method} ${path} HTTP/1.1\r\n${lines.join('')}Content-Length: ${length}\r\n\r\n{"address": "`,
      { waitMs: WAIT_MS },
    );
    const res = lastAnswer(text, ms);
    const body = JSON.parse(res.body) as unknown;
    assertMatchesContract(method.toLowerCase(), path, { ...res, body });
    expect(text.match(/HTTP\/1\.1 \d{3} /g), 'answers sent').to.deep.equal([`HTTP/1.1 ${status} `]);
    expect(res.headers.connection).to.equal('close');
    expect(closed, 'closed by the server').to.equal(true);
    return body;
  }

  it('closes the connection after refusing a key, and never sends a second answer', async () => {
    const body = await onlyAnswerToCutShort(['POST', '/reports/new'], { 'X-API-KEY': 'not-a-key' }, 100_000, 400);
    expect(body).to.deep.equal({ error: 'invalid API key' });
  });

  it('refuses a Content-Length over 1 MiB with 413 at once, closing the connection', async () => {
    const { key } = await newCompany();
    const body = await onlyAnswerToCutShort(['POST', '/reports/new'], { 'X-API-KEY': key }, 10_000_000, 413);
    expect(body).to.deep.equal({ error: 'request body is larger than 1 MiB' });
  });

  it('closes the connection after answering a GET whose body is never read', async () => {
    const { key } = await newCompany();
    await onlyAnswerToCutShort(['GET', '/auth'], { 'X-API-KEY': key }, 1_000, 200);
  });

  it('keeps the connection open after a refusal of a body it read', async () => {
    const { key } = await newCompany();
    const body = '{}';
    const { text } = await converse(
      port,
      `POST /reports/new HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${key}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body}GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      { waitMs: WAIT_MS },
    );
    expect(text.match(/HTTP\/1\.1 \d{3} /g)).to.deep.equal(['HTTP/1.1 400 ', 'HTTP/1.1 200 ']);
  });
});
