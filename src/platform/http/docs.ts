import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Router, type Request } from 'express';
import { stringify } from 'yaml';

const GENERATED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../generated');
/** What changed for partners in each version of the document, linked from its description. */
const CHANGELOG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../PARTNER-CHANGELOG.md');

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
    <redoc spec-url="openapi.json"></redoc>
    <script src="docs/redoc.standalone.js"></script>
  </body>
</html>
`;

/** Documents kept per base URL at most: the origin comes from the request, so its variety is bounded here. */
const MAX_ORIGINS = 16;

/** A host as a Host header may hold it: a name or IPv4 address, or a bracketed IPv6 one, and a port. */
const HOST = /^([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/;

/**
 * The base URL a document names in `servers`: PUBLIC_BASE_URL when set, otherwise the origin the
 * document was requested at (from X-Forwarded-Proto/Host when the app trusts its proxy). A Host that
 * is no host name gives "/", which OpenAPI reads as the document's own origin.
 */
function baseUrlOf(req: Request, publicBaseUrl: string | undefined): string {
  if (publicBaseUrl !== undefined) return publicBaseUrl;
  const { protocol, host } = req;
  return /^https?$/.test(protocol) && host !== undefined && HOST.test(host) ? `${protocol}://${host}` : '/';
}

/** The generated documents, parsed once per process: every app of a process serves them, unchanged. */
const parsed = new Map<string, Record<string, unknown>>();
function generatedDocument(file: string): Record<string, unknown> {
  let document = parsed.get(file);
  if (!document) parsed.set(file, (document = JSON.parse(readFileSync(path.join(GENERATED, file), 'utf8'))));
  return document!;
}

/** A published document in YAML and JSON, naming the base URL of each request in `servers`. */
function servedDocument(file: string, publicBaseUrl: string | undefined) {
  const document = generatedDocument(file);
  const byBaseUrl = new Map<string, { yaml: string; json: string }>();
  return (req: Request) => {
    const url = baseUrlOf(req, publicBaseUrl);
    let texts = byBaseUrl.get(url);
    if (!texts) {
      const named = { ...document, servers: [{ url, description: 'The service that published this document' }] };
      // Written by YAML 1.1 rules, which quote every string a 1.1 loader (js-yaml's default, PyYAML) would
      // read as something else: 2026-03-14 as a date, yes/on as true, 1:30 as 90. Quoted, it is a string
      // to 1.1 and 1.2 loaders alike; no %YAML directive is written, which some tools refuse.
      texts = { yaml: stringify(named, { version: '1.1' }), json: JSON.stringify(named, null, 2) };
      if (byBaseUrl.size >= MAX_ORIGINS) byBaseUrl.delete(byBaseUrl.keys().next().value!);
      byBaseUrl.set(url, texts);
    }
    return texts;
  };
}

/** The published documents by address: the partner document, and its OpenAPI 3.0.3 form for 3.0-only tools. */
const DOCUMENTS = { '/openapi': 'partner-openapi.json', '/openapi-3.0': 'partner-openapi-3.0.json' };

/**
 * The published partner documents (generated/partner-openapi*.json, derived by `npm run gen`, read
 * once here) and the API reference page. Public: no key, and outside the validated contract.
 */
export function docsRouter({ publicBaseUrl }: { publicBaseUrl: string | undefined }): Router {
  // Read on first use: once read, the bundle (a megabyte of script) is held for good, and most processes
  // never serve the page.
  let redoc: string | undefined;
  const redocBundle = () => (redoc ??= readFileSync(REDOC_BUNDLE, 'utf8').replaceAll(REDOC_LOGO_URL, 'data:,'));
  const changelog = readFileSync(CHANGELOG, 'utf8');
  const router = Router();
  // The documents name the origin they were requested at, unless PUBLIC_BASE_URL fixes it.
  const vary = publicBaseUrl === undefined ? { Vary: 'X-Forwarded-Proto, X-Forwarded-Host' } : {};

  for (const [address, file] of Object.entries(DOCUMENTS)) {
    const document = servedDocument(file, publicBaseUrl);
    // Partners' tools (editors, generators in a browser) may fetch the documents from another origin.
    router.get(`${address}.yaml`, (req, res) => {
      res
        .set({ ...vary, 'Access-Control-Allow-Origin': '*', 'Content-Type': 'application/yaml; charset=utf-8' })
        .send(document(req).yaml);
    });
    router.get(`${address}.json`, (req, res) => {
      res
        .set({ ...vary, 'Access-Control-Allow-Origin': '*', 'Content-Type': 'application/json; charset=utf-8' })
        .send(document(req).json);
    });
  }
  router.get('/partner-changelog.md', (_req, res) => {
    res.set({ 'Access-Control-Allow-Origin': '*', 'Content-Type': 'text/markdown; charset=utf-8' }).send(changelog);
  });
  router.get('/docs', (_req, res) => {
    res.set('Content-Security-Policy', DOCS_CSP).type('html').send(DOCS_PAGE);
  });
  router.get('/docs/redoc.standalone.js', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=3600').type('js').send(redocBundle());
  });
  return router;
}
