import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { createServer, type Server } from 'node:http';
import { stopServer } from './listen.js';
import { operations } from './document-operations.js';

/**
 * Compiles every operation's validators at start (WARM_VALIDATORS=true) instead of at its first request,
 * when compiling would block the event loop for every company: one example request per operation goes
 * through the app's own validator handlers, on a private 127.0.0.1 server.
 */
export async function warmValidators(validator: RequestHandler[]): Promise<void> {
  const app = express();
  app.use(express.json(), validator);
  app.use((_req, res) => {
    res.json({});
  });
  const respond500: ErrorRequestHandler = (_err, _req, res, _next) => {
    if (!res.headersSent) res.status(500).end();
  };
  app.use(respond500);
  // Exclusive: a cluster worker's port 0 would otherwise be one port shared by every worker (node:cluster).
  const server = await new Promise<Server>((resolve, reject) => {
    const created = createServer(app).once('error', reject);
    created.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => resolve(created));
    // A process stopping while it warms up does not wait for it.
    created.unref();
  });
  const { port } = server.address() as { port: number };
  try {
    for (const { method, path, body } of operations()) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
    }
  } finally {
    await stopServer(server, 1_000);
  }
}
