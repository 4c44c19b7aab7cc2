import { pino, type Logger } from 'pino';

export type { Logger };

/** Paths that could hold a secret; pino replaces them before anything is written. */
export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'key',
  'apiKey',
  'appToken',
  'secret',
  'webhookSecret',
];

export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } });
}
