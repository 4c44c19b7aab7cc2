import type { ErrorRequestHandler, RequestHandler } from 'express';
import { HttpError, refuse } from '../core/errors.js';
import { databaseRefusal } from '../db/unavailable.js';
import type { Logger } from '../platform/observability/logger.js';
import { requestLog } from '../platform/observability/request-log.js';
import { routeTemplate } from '../platform/http/route-template.js';
import { Layout } from './layout.js';
import { render } from './render.js';

const TITLES: Record<number, string> = {
  400: 'Bad request',
  403: 'Refused',
  404: 'Not found',
  410: 'No longer valid',
  413: 'Too large',
  415: 'Not a form',
  503: 'Unavailable for the moment',
};

/** An error as a page: its title, and a message that says what happened (never a stack). */
function ErrorPage({ status, message }: { status: number; message: string }) {
  return (
    <Layout title={TITLES[status] ?? 'Something went wrong'}>
      <p>{message}</p>
      <p>
        <a href="/console">Back to the console</a>
      </p>
    </Layout>
  );
}

export const notFoundPage: RequestHandler = () => {
  throw refuse.notFound('there is no such page');
};

/** A refusal meant for the person (an HttpError below 500); anything else is a failure of ours. */
const clientError = (err: unknown) => (err instanceof HttpError && err.status < 500 ? err : undefined);

/**
 * Every error under /console as an HTML page with the console's headers; a 500 or 503 is logged, a
 * 500's details never shown. A 503 says why and carries Retry-After, as the API's response does.
 */
export function errorPages(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const refusal = clientError(err);
    // The database unreachable or read-only: the API's 503, as a page.
    const unavailable = refusal ? undefined : databaseRefusal(err);
    if (!refusal)
      (requestLog(req) ?? logger).error({ err, method: req.method, route: routeTemplate(req) }, 'request failed');
    if (res.headersSent) return void res.destroy();
    if (unavailable) res.set(unavailable.headers);
    const { status, message } = refusal ?? unavailable ?? { status: 500, message: 'something went wrong on our side' };
    render(res, status, <ErrorPage status={status} message={message} />);
  };
}
