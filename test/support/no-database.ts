import pg from 'pg';

/**
 * Root of the unit run (test/mocharc.unit.json), in place of the harness: no PostgreSQL is started, and a
 * test that opens a connection all the same fails at once, saying where it belongs (npm test's run).
 */
const refused = () =>
  new Error('the unit tests (npm run test:unit) start no PostgreSQL: a test that needs one runs in npm test');

pg.Client.prototype.connect = function connect(callback?: (err: Error) => void) {
  if (!callback) return Promise.reject(refused());
  process.nextTick(callback, refused());
} as pg.Client['connect'];
