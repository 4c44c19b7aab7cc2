import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Router } from 'express';

/**
 * The package root: this module is src/console/assets.ts under tsx and dist/console/assets.js in the
 * production build, two folders down either way. The console's own assets are read from
 * src/console/assets in both, htmx from node_modules (never a CDN: the CSP allows only this origin).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const ASSETS: Record<string, string> = {
  'console.css': `${ROOT}src/console/assets/console.css`,
  'console.js': `${ROOT}src/console/assets/console.js`,
  'favicon.svg': `${ROOT}src/console/assets/favicon.svg`,
  'htmx.min.js': createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js'),
};

/** GET /assets/<name>: the files above, and nothing else (no directory is served). */
export function assetsRouter(): Router {
  const router = Router();
  for (const [name, file] of Object.entries(ASSETS))
    router.get(`/assets/${name}`, (_req, res, next) => {
      // The console's Cache-Control (no-store) stands: sendFile would set its own.
      res.sendFile(file, { cacheControl: false, lastModified: false }, (err) => err && next(err));
    });
  return router;
}
