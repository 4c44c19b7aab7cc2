import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Router } from 'express';

const GENERATED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../generated');

/** Redoc's self-contained browser bundle, served from our own origin: the docs page loads nothing from a CDN. */
const REDOC_BUNDLE = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');

/**
 * The one remote asset in the bundle is the "API docs by Redocly" logo (no option turns it off).
 * An empty data: image fails to load, and Redoc then drops the image and keeps the text link.
 */
const REDOC_LOGO_URL = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

/**
 * The docs page keeps its own policy whatever the app-wide headers say: scripts only as files from
 * this origin, Redoc's search worker from a blob: URL, and the inline styles its CSS-in-JS writes.
 */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self' blob:",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const DOCS_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Inspection Report Intake API reference</title>
    <link rel="icon" href="data:,">
  </head>
  <body>
    <redoc spec-url="/openapi.json"></redoc>
    <script src="/docs/redoc.standalone.js"></script>
  </body>
</html>
`;

/**
 * The published partner document (generated/partner-openapi.*, derived by `npm run gen`, read once
 * here) and its API reference page. Public: no key, and outside the validated contract.
 */
export function docsRouter(): Router {
  const yamlDocument = readFileSync(path.join(GENERATED, 'partner-openapi.yaml'), 'utf8');
  const jsonDocument = readFileSync(path.join(GENERATED, 'partner-openapi.json'), 'utf8');
  const redoc = readFileSync(REDOC_BUNDLE, 'utf8').replaceAll(REDOC_LOGO_URL, 'data:,');
  const router = Router();

  // Partners' tools (editors, generators in a browser) may fetch the document from another origin.
  router.get('/openapi.yaml', (_req, res) => {
    res
      .set({ 'Access-Control-Allow-Origin': '*', 'Content-Type': 'application/yaml; charset=utf-8' })
      .send(yamlDocument);
  });
  router.get('/openapi.json', (_req, res) => {
    res
      .set({ 'Access-Control-Allow-Origin': '*', 'Content-Type': 'application/json; charset=utf-8' })
      .send(jsonDocument);
  });
  router.get('/docs', (_req, res) => {
    res.set('Content-Security-Policy', DOCS_CSP).type('html').send(DOCS_PAGE);
  });
  router.get('/docs/redoc.standalone.js', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=3600').type('js').send(redoc);
  });
  return router;
}
