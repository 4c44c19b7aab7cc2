/**
 * Starts the straightforward implementation for the benchmark: DATABASE_URL (its tables are in the
 * schema `straightforward`), PORT, LOG_LEVEL. Listens on 127.0.0.1; SIGTERM stops it.
 */
import pg from 'pg';
import { pino } from 'pino';
import { createStraightforwardApp } from './app.js';
import { SCHEMA } from './schema.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, options: `-c search_path=${SCHEMA}` });
const logger = pino({ level: process.env.LOG_LEVEL ?? 'info', redact: ['req.headers["x-api-key"]'] });
const server = createStraightforwardApp({ pool, logger }).listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
