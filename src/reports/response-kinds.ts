/**
 * The kind of a partner request, for the partner limits' estimate of its response's size
 * (platform/limits/partner-limits.ts): one of a few, whatever the path. A read of reports may return a
 * page or a report of the largest size (about 1 MiB), so such a kind not yet seen counts as large.
 */
export function partnerResponseKind(method: string, path: string): { kind: string; large: boolean } {
  const name =
    path === '/reports' ? 'list' : path === '/reports/new' ? 'new' : path.startsWith('/reports/') ? 'report' : 'other';
  const read = method === 'GET' || method === 'HEAD';
  return { kind: `${method} ${name}`, large: read && (name === 'list' || name === 'report') };
}
