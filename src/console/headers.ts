import type { RequestHandler } from 'express';
import { securityHeaders } from '../platform/http/security-headers.js';

/**
 * The console's headers on every response under /console, errors included: scripts, styles and images
 * only from the service itself and never inline (htmx's config forbids it what would need them), forms
 * posted only to it, no framing, nothing kept by a cache. The referrer goes only to this origin (no
 * page's address leaves it), so that a browser sends the page's own forms with their real Origin, which
 * the CSRF check compares (under no-referrer it would send `Origin: null`).
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
  referrerPolicy: { policy: 'same-origin' },
});

export const consoleHeaders: RequestHandler = (req, res, next) =>
  pageHeaders(req, res, () => {
    res.set('Cache-Control', 'no-store');
    next();
  });
