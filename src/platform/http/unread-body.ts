import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';

/**
 * Whether a request carries a body: a Transfer-Encoding, or a Content-Length above 0 (RFC 9112 §6.3).
 * `Content-Length: 0` announces none.
 */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > 0);
}

/**
 * A response written before its request's body has arrived in full (a refusal before the body is read,
 * a body sent with a GET) closes the connection: kept open, the rest of the body would be read as the
 * next request, or the request timeout's 408 would arrive as the response to the client's next request.
 */
export const closeAfterUnreadBody: RequestHandler = (req, res, next) => {
  if (hasBody(req)) {
    // Every response's head passes through writeHead (Node calls it for an implicit head too).
    const writeHead = res.writeHead;
    res.writeHead = function (this: typeof res, ...args: Parameters<typeof writeHead>) {
      if (!req.complete) this.setHeader('Connection', 'close');
      return writeHead.apply(this, args);
    } as typeof writeHead;
  }
  next();
};
