/**
 * Local development: what `npm start` without DATABASE_URL runs on one machine (an embedded PostgreSQL
 * under .data/, the demo seed, the credentials beside it), and the ports and pids that the embedded
 * database, the test harness and the benchmarks share. Production never loads it; the entry point
 * (server.ts) starts it, and the tests and scripts use it, through this file.
 */
export { startLocalMode, type LocalMode } from './local-mode.js';
export {
  closedToOthers,
  startEmbeddedPostgres,
  stopLeftoverPostgres,
  type EmbeddedDatabase,
} from './embedded-postgres.js';
export { freePort, isAlive } from './ports-and-pids.js';
