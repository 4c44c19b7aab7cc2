import type { RequestHandler } from 'express';
import { refuse } from '../../core/errors.js';

/** Node's own test for the one expectation it meets itself, by sending "100 Continue". */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

/**
 * Any other Expect is refused with 417 (RFC 9110 §10.1.1). listen() hands these requests to the app
 * (Node's checkExpectation) so that the 417 is written, logged and counted as every other error. The
 * body, if any, is left unread, so the connection closes after the response.
 */
export const refuseUnmetExpectations: RequestHandler = (req, _res, next) => {
  const expect = req.get('expect');
  if (expect !== undefined && !CONTINUE.test(expect)) {
    throw refuse.expectationFailed();
  }
  next();
};
