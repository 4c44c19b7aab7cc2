import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Paths that could hold a secret (API keys, the application token, webhook secrets, credentials);
 * pino replaces them before anything is written. Request lines carry no headers at all (see
 * observability/request-log.ts); these paths guard whatever else gets logged.
 */
export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers["x-api-key"]',
  'headers.authorization',
  'key',
  'apiKey',
  'appToken',
  'secret',
  'webhookSecret',
  'secrets',
  'webhookSecrets',
  'password',
  'databaseUrl',
  '*.key',
  '*.apiKey',
  '*.appToken',
  '*.secret',
  '*.webhookSecret',
  '*.secrets',
  '*.webhookSecrets',
  '*.password',
  '*.databaseUrl',
];

/**
 * The one logger: JSON lines at `level` (LOG_LEVEL), to stdout unless a destination is given
 * (tests pass a stream to read what was written).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
