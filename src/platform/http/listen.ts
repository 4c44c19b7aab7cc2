import { randomUUID } from 'node:crypto';
import http, { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Express } from 'express';

/**
 * Load balancers keep idle connections open for 60 s (AWS ALB's default): the server must keep them
 * longer, or it closes a connection just as the balancer sends a request on it (a spurious 502).
 * An idle connection is not subject to the request timeout: that starts with a request's first byte.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** A client gets this long to send a whole request (headers and a body of at most 1 MiB); then 408. */
export const REQUEST_TIMEOUT_MS = 30_000;
/**
 * How often Node compares requests in progress with the request timeout. With its default, 30 s, a
 * body trickling in lives on long past the timeout; checked every second, it is cut within a second
 * of the timeout.
 */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** The response to a request Node refused before the app saw it (headers too large, bad framing, too slow). */
function clientErrorOf(err: Error & { code?: string; reason?: unknown }, requestTimeoutMs: number) {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, error: `the request headers are larger than ${http.maxHeaderSize / 1024} KiB` };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, error: `the request was not received in full within ${requestTimeoutMs / 1000} s` };
    default:
      // llhttp's reason is a fixed sentence ("Invalid header value char"), never the bytes received.
      return { status: 400, error: `malformed HTTP request${typeof err.reason === 'string' ? `: ${err.reason}` : ''}` };
  }
}

/**
 * Responds to Node's own refusals with a JSON error body where Node would send an empty one: only when
 * no response of this connection has started (else the bytes would corrupt it), and closing the connection.
 */
function respondToClientErrors(server: Server, requestTimeoutMs: number): void {
  const responding = new WeakMap<Socket, ServerResponse>();
  const track = (req: IncomingMessage, res: ServerResponse) => {
    responding.set(req.socket, res);
    res.once('finish', () => {
      if (responding.get(req.socket) === res) responding.delete(req.socket);
    });
  };
  server.prependListener('request', track);
  server.prependListener('checkExpectation', track);
  server.on('clientError', (err: Error & { code?: string }, socket: Socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable || responding.get(socket)?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, error } = clientErrorOf(err, requestTimeoutMs);
    const body = JSON.stringify({ error });
    const head = [
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${randomUUID()}`,
      // As every response of the API (see no-store.ts).
      'Cache-Control: no-store',
      'Connection: close',
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy());
  });
}

export interface ListenOptions {
  /** REQUEST_TIMEOUT_MS unless given: tests of the timeout use a shorter one. */
  requestTimeoutMs?: number;
}

/** Listens with the timeouts above, Node's own refusals sent as JSON; resolves once the port is bound. */
export async function listen(
  app: Express,
  port: number,
  host: string,
  { requestTimeoutMs = REQUEST_TIMEOUT_MS }: ListenOptions = {},
): Promise<Server> {
  // headersTimeout is left to Node: the request timeout, which covers the headers as well.
  const server = http.createServer(
    {
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      requestTimeout: requestTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    },
    app,
  );
  respondToClientErrors(server, requestTimeoutMs);
  // Node responds to an Expect it cannot meet with an empty 417 unless the app does: the app refuses it as JSON.
  server.on('checkExpectation', app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/**
 * Graceful stop: accept no more connections, let requests in flight finish, close connections as
 * they fall idle (keep-alive ones included), and after timeoutMs cut off whatever is still open.
 * The listening socket is closed before this returns; the promise resolves true when every request
 * finished in time.
 */
export async function stopServer(server: Server, timeoutMs: number): Promise<boolean> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // A request that still arrives on an open keep-alive connection gets its response, then the connection closes.
  server.prependListener('request', (_req, res) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  });
  const sweep = setInterval(() => server.closeIdleConnections(), 100);
  const deadline = new AbortController();
  try {
    const drained = await Promise.race([closed.then(() => true), sleep(timeoutMs, false, { signal: deadline.signal })]);
    if (!drained) {
      server.closeAllConnections();
      await closed;
    }
    return drained;
  } finally {
    clearInterval(sweep);
    deadline.abort();
  }
}
