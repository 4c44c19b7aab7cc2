import type { RequestHandler } from 'express';

/**
 * `Cache-Control: no-store` on every response of the API's operations, errors included: they carry one
 * company's reports, the verdict on a key, the application's secrets or the instance's state, none of
 * which a browser, proxy or CDN may keep. (The public documents under docsRouter are cacheable.)
 */
export const noStore: RequestHandler = (_req, res, next) => {
  res.set('Cache-Control', 'no-store');
  next();
};
