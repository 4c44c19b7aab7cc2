import type { ErrorRequestHandler, Request, RequestHandler } from 'express';

const WAS_HEAD = Symbol('HEAD');
type MaybeHead = Request & { [WAS_HEAD]?: true };

function restore(req: MaybeHead): void {
  if (req[WAS_HEAD]) req.method = 'HEAD';
}

/**
 * HEAD is GET without a body (RFC 9110), and Express routes it to the GET handlers; but the validator
 * finds operations by method and would respond 405, the document declaring only GET. So HEAD goes through
 * the validator as the GET it mirrors and is HEAD again after it (logs, routing, errors). Node sends no
 * body for a HEAD request whatever the handler writes: it decided so when the request arrived.
 */
export function headAsGet(validator: RequestHandler[]): (RequestHandler | ErrorRequestHandler)[] {
  const asGet: RequestHandler = (req: MaybeHead, _res, next) => {
    if (req.method === 'HEAD') {
      req.method = 'GET';
      req[WAS_HEAD] = true;
    }
    next();
  };
  const backToHead: RequestHandler = (req, _res, next) => {
    restore(req);
    next();
  };
  const backToHeadOnError: ErrorRequestHandler = (err, req, _res, next) => {
    restore(req);
    next(err);
  };
  return [asGet, ...validator, backToHead, backToHeadOnError];
}
