import type { Request, RequestHandler } from 'express';
import { keyPrincipal } from '../../core/request-context.js';
import { refuse } from '../../core/errors.js';
import { BODILESS_METHODS, MAX_BODY_BYTES } from '../http/json-body.js';
import { Admission, AdmissionRefused } from './admission.js';
import { ResponseSizes } from './response-sizes.js';
import type { RateLimiter } from './rate-limiter.js';

/** The name of the one policy in the RateLimit header fields. */
const POLICY = 'per-key';
/** Seconds a request refused for its company's share is asked to wait. */
const BUSY_RETRY_AFTER_SECONDS = 1;

/**
 * The bytes a request's body will hold in memory, at most: its Content-Length, or the whole budget
 * when it is compressed or chunked (it may inflate to 1 MiB); none for a method whose body is never read.
 */
export function bodyBytes(req: Request): number {
  if (BODILESS_METHODS.has(req.method)) return 0;
  const encoding = req.headers['content-encoding'];
  const length = Number(req.headers['content-length']);
  if ((encoding !== undefined && encoding !== 'identity') || !Number.isFinite(length)) return MAX_BODY_BYTES;
  return Math.min(Math.max(length, 0), MAX_BODY_BYTES);
}

/**
 * A partner request's kind, for the estimate of its response's size: the composition names it from the
 * request's method and whole path, as only the components know their paths.
 */
export interface ResponseKind {
  /** One of a few, whatever the path: the responses of one kind weigh alike. */
  kind: string;
  /**
   * Whether a response of this kind not yet seen from the company counts as the largest (MAX_BODY_BYTES):
   * its first burst of such responses is then admitted by its byte share, not by count alone, and does not
   * hold up the other companies' requests at a process's start; its first response teaches the real size.
   * Others count as small.
   */
  large: boolean;
}

export type ResponseKindOf = (method: string, path: string) => ResponseKind;

export interface PartnerLimits {
  admission: Admission;
  /** Undefined when RATE_LIMIT_PER_MINUTE is 0: no budget, and no RateLimit header fields. */
  rateLimiter?: RateLimiter;
}

/**
 * The partner API's limits, after the key is known and before the body is read or anything shared is
 * taken: the key's request budget (RateLimit header fields on every response; 429 past it), then the
 * company's fair share of the process (429 when its queue is full or its turn does not come in time).
 */
export function partnerLimitsMiddleware(
  { admission, rateLimiter }: PartnerLimits,
  responseKindOf: ResponseKindOf,
): RequestHandler {
  const policy = rateLimiter && `"${POLICY}";q=${rateLimiter.perMinute};w=60`;
  const responseSizes = new ResponseSizes();
  const tooBusy = (err: unknown) => {
    if (!(err instanceof AdmissionRefused)) return err;
    return refuse.tooManyRequests(
      `too many requests of this company in flight (${err.reason}): retry in ${BUSY_RETRY_AFTER_SECONDS} s`,
      BUSY_RETRY_AFTER_SECONDS,
    );
  };
  return (req, res, next) => {
    // The key's own company: a sandbox (test keys) is a company of its own with a share of its own, as
    // any other company, so nothing its requests hold refuses or slows the live ones'.
    const { companyId, keyId } = keyPrincipal(req);
    if (rateLimiter) {
      const { allowed, remaining, resetSeconds } = rateLimiter.consume(keyId, companyId);
      res.setHeader('RateLimit-Policy', policy!);
      res.setHeader('RateLimit', `"${POLICY}";r=${remaining};t=${resetSeconds}`);
      if (!allowed) {
        throw refuse.tooManyRequests(
          `this API key has used its ${rateLimiter.perMinute} requests of this minute: retry in ${resetSeconds} s`,
          resetSeconds,
        );
      }
    }
    // The whole path: mounted on '/reports', req.path alone is '/' for a list and '/<id>' for a report.
    const { kind, large } = responseKindOf(req.method, `${req.baseUrl}${req.path}`);
    const expected = responseSizes.expected(companyId, kind) ?? (large ? MAX_BODY_BYTES : 0);
    const bytes = bodyBytes(req) + Math.min(expected, MAX_BODY_BYTES);
    // Ended when the response is, however it ends; a caller gone while waiting gives its turn back at
    // once. The connection may already have closed (during the key check): then no 'close' comes again.
    let release = admission.tryAdmit(companyId, bytes);
    let closed = res.closed;
    res.once('close', () => {
      closed = true;
      // Only an admitted request's response counts: a refusal's few bytes would lower the estimate of a
      // company refused often, and admit more of its large responses at once.
      if (release && res.writableFinished)
        responseSizes.record(companyId, kind, Number(res.getHeader('content-length')) || 0);
      release?.();
    });
    const go = () => (closed ? release!() : next());
    if (release) return go();
    admission.admit(companyId, bytes).then(
      (granted) => {
        release = granted;
        go();
      },
      (err: unknown) => next(tooBusy(err)),
    );
  };
}
