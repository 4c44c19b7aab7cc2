import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Express } from 'express';

/**
 * Load balancers keep idle connections open for 60 s (AWS ALB's default): the server must keep them
 * longer, or it closes a connection just as the balancer sends a request on it (a spurious 502).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** Longer than the keep-alive timeout, as Node requires for the two to work together. */
export const HEADERS_TIMEOUT_MS = 66_000;
/** A client gets this long to send a whole request (headers and a body of at most 1 MiB). */
export const REQUEST_TIMEOUT_MS = 30_000;

/** Listens with the timeouts above; resolves once the port is bound. */
export async function listen(app: Express, port: number, host: string): Promise<Server> {
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(port, host, () => resolve(s));
    s.once('error', reject);
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
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
  // A request that still arrives on an open keep-alive connection is answered, then the connection closes.
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
