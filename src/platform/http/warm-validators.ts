import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { createServer, type Server } from 'node:http';
import { stopServer } from './listen.js';
import { openApiDocument } from './openapi-document.js';

interface Operation {
  method: string;
  path: string;
  body?: unknown;
}

type Node = Record<string, unknown>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** A path parameter's value when the document gives no example: the ids are uuids. */
const SOME_ID = '00000000-0000-4000-8000-000000000000';

/** The first example of a request body (`example`, or the first of `examples`), following $refs. */
function bodyExample(document: Node, operation: Node): unknown {
  let body = operation.requestBody as Node | undefined;
  if (typeof body?.$ref === 'string') body = resolve(document, body.$ref);
  const media = (body?.content as Node | undefined)?.['application/json'] as Node | undefined;
  if (!media) return undefined;
  if (media.example !== undefined) return media.example;
  const first = Object.values((media.examples as Node | undefined) ?? {})[0] as Node | undefined;
  return typeof first?.$ref === 'string' ? resolve(document, first.$ref).value : first?.value;
}

const resolve = (document: Node, ref: string): Node =>
  ref
    .slice(2)
    .split('/')
    .reduce<Node>((node, name) => node[name] as Node, document);

/** Every operation of the document, with a path its parameters fill and an example body. */
function operations(): Operation[] {
  const document = openApiDocument<Node>();
  return Object.entries(document.paths as Record<string, Node>).flatMap(([template, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({
      method: method.toUpperCase(),
      path: template.replace(/\{[^}]+\}/g, SOME_ID),
      body: bodyExample(document, item[method] as Node),
    })),
  );
}

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
