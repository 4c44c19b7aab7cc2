// Local development (`npm start` without DATABASE_URL): an embedded PostgreSQL under .data/, the demo
// seed and its credentials, and the ports and pids shared with the test harness and the benchmarks.
// Production never loads it.

export { startLocalMode, type LocalMode } from './local-mode.js';
export {
  closedToOthers,
  startEmbeddedPostgres,
  stopLeftoverPostgres,
  type EmbeddedDatabase,
} from './embedded-postgres.js';
export { freePort, isAlive } from './ports-and-pids.js';
