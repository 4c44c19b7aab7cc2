import type { Request } from 'express';
import { openApiDocument } from './openapi-document.js';

/** Logs and metrics label requests by this when no path of the document matches: bounded cardinality. */
export const UNMATCHED_ROUTE = 'unmatched';

interface ValidatedRequest {
  openapi?: { openApiRoute?: string };
}

const templates = Object.keys(openApiDocument<{ paths: object }>().paths).map((template) => ({
  template,
  // Express matches paths case-insensitively and with or without a trailing slash.
  regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`, 'i'),
}));

/**
 * The path template of openapi.yaml a request belongs to (`/reports/{reportId}`), never the raw
 * path, so that logs and metrics group by operation. The validator's match is used when it ran;
 * requests refused before it (a missing API key) are matched against the document here; routes
 * outside the document (the docs page) go by their Express route.
 */
export function routeTemplate(req: Request): string {
  const matched = (req as ValidatedRequest).openapi?.openApiRoute;
  if (matched) return matched;
  const route = (req.route as { path?: unknown } | undefined)?.path;
  // originalUrl: req.path is relative to the router while a mounted middleware runs.
  const path = req.originalUrl.split('?')[0]!;
  const template = templates.find((t) => t.regex.test(path))?.template;
  // A route of a mounted router (the console's) is named with the path it is mounted at.
  return template ?? (typeof route === 'string' ? `${req.baseUrl}${route}` : UNMATCHED_ROUTE);
}

/**
 * The path parameters of a raw (undecoded) request path, by the template of openapi.yaml it matches,
 * in path order: [name, raw segment]. Empty when no template matches.
 */
export function rawPathParams(path: string): [name: string, raw: string][] {
  const match = templates.find((t) => t.regex.test(path));
  if (!match) return [];
  const segments = path.split('/');
  return match.template
    .split('/')
    .flatMap((part, i): [string, string][] => (/^\{.+\}$/.test(part) ? [[part.slice(1, -1), segments[i] ?? '']] : []));
}
