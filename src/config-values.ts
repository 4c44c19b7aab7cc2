import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';

/** How each kind of environment value is read and checked; a bad one throws a ConfigError naming its variable. */

const MAX_WORKERS = 64;

export class ConfigError extends Error {}

export function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

export function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** "10.0.0.0/8,127.0.0.1/32" → the CIDRs, each checked; a bare address or a bad prefix is refused. */
export function cidrList(env: NodeJS.ProcessEnv, name: string): string[] {
  const entries = (env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const entry of entries) {
    const [address = '', prefix = '', extra] = entry.split('/');
    const family = isIP(address);
    const max = family === 6 ? 128 : 32;
    if (family === 0 || extra !== undefined || !/^\d{1,3}$/.test(prefix) || Number(prefix) > max) {
      throw new ConfigError(
        `${name} must be a comma-separated list of CIDRs such as 127.0.0.1/32,10.0.0.0/8; "${entry}" is not one`,
      );
    }
  }
  return entries;
}

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** The longest duration any of these settings takes: a year. */
const MAX_DURATION_MS = 365 * UNIT_MS.d;

/** "5s", "30m", "2h", "5d": a whole number above zero with its unit, in milliseconds; undefined when it is not one. */
function durationMs(text: string): number | undefined {
  const match = /^(\d+)([smhd])$/.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return ms > 0 && ms <= MAX_DURATION_MS ? ms : undefined;
}

export function duration(env: NodeJS.ProcessEnv, name: string, fallback: string): number {
  const raw = env[name] || fallback;
  const ms = durationMs(raw);
  if (ms === undefined) {
    throw new ConfigError(
      `${name} must be a duration above zero such as 30s, 5m, 2h or 5d (at most 365d), got "${raw}"`,
    );
  }
  return ms;
}

/** WEBHOOK_RETRY_SCHEDULE: a comma list of durations, each above zero ("5s,5m,30m"). */
export function schedule(env: NodeJS.ProcessEnv, name: string, fallback: string): number[] {
  const raw = env[name] || fallback;
  const waits = raw.split(',').map(durationMs);
  if (waits.some((ms) => ms === undefined) || waits.length > 100) {
    throw new ConfigError(
      `${name} must be a comma-separated list of at most 100 durations above zero, each a whole number with s, m, h or d (such as 5s,5m,30m,2h), got "${raw}"`,
    );
  }
  return waits as number[];
}

/** WEB_CONCURRENCY: a number of workers, or `auto` for one per core this process may use. */
export function concurrency(env: NodeJS.ProcessEnv): number {
  const raw = env.WEB_CONCURRENCY;
  if (raw === undefined || raw === '') return 1;
  if (raw === 'auto') return Math.min(availableParallelism(), MAX_WORKERS);
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_WORKERS) {
    throw new ConfigError(`WEB_CONCURRENCY must be auto or an integer from 1 to ${MAX_WORKERS}, got "${raw}"`);
  }
  return Number(raw);
}

export function postgresUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name] || undefined;
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a postgres:// or postgresql:// URL`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(`${name} must be a postgres:// or postgresql:// URL`);
  }
  return raw;
}

/** An absolute http(s) URL without query, fragment or credentials, returned without its trailing slash. */
export function publicBaseUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name] || undefined;
  if (raw === undefined) return undefined;
  const message = `${name} must be an absolute http:// or https:// URL without query or fragment, such as https://api.example.com, got "${raw}"`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(message);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(message);
  }
  return url.href.replace(/\/+$/, '');
}
