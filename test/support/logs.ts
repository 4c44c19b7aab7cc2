import { createLogger, type Logger } from '../../src/platform/observability/logger.js';

export interface LogEntry {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A logger writing into memory: what the service would have written to stdout, line by line. */
export function captureLogs(level = 'trace'): { logger: Logger; text: () => string; entries: () => LogEntry[] } {
  const lines: string[] = [];
  const logger = createLogger(level, { write: (line: string) => void lines.push(line) });
  return {
    logger,
    text: () => lines.join(''),
    entries: () => lines.map((line) => JSON.parse(line) as LogEntry),
  };
}
