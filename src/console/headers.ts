import type { RequestHandler } from 'express';
import { securityHeaders } from '../platform/http/security-headers.js';

/**
 * The console's headers on every answer under /console, errors included: scripts, styles and images
 * only from the service itself and never inline (htmx's config forbids it what would need them), forms
 * posted only to it, no framing, no referrer, nothing kept by a cache.
 */
const pageHeaders = securityHeaders({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'"],
      connectSrc: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
  },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
});

export const consoleHeaders: RequestHandler = (req, res, next) =>
  pageHeaders(req, res, () => {
    res.set('Cache-Control', 'no-store');
    next();
  });
