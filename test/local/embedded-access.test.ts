import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { closedToOthers, startEmbeddedPostgres } from '../../src/local/index.js';

/**
 * Started as root, the embedded PostgreSQL runs as the OS user "postgres": a data directory under a
 * folder that user cannot enter must be refused with a message saying what to do, not crash.
 */
describe('embedded PostgreSQL in a folder other users cannot enter', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-private-')); // mode 0700
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('finds the first folder on the way that others cannot enter', async () => {
    await mkdir(path.join(dir, 'project'), { mode: 0o755 });
    expect(closedToOthers(path.join(dir, 'project', '.data', 'pg'))).to.equal(dir);
    await chmod(dir, 0o711);
    expect(closedToOthers(path.join(dir, 'project', '.data', 'pg'))).to.equal(undefined);
  });

  it('refuses to start there as root, naming the folder and the fixes (and starts there as anyone else)', async () => {
    const dataDir = path.join(dir, 'pg');
    if (process.getuid?.() === 0) {
      const failure = await startEmbeddedPostgres(dataDir).then(
        () => undefined,
        (err: Error) => err.message,
      );
      expect(failure).to.equal(
        `the embedded PostgreSQL runs as the OS user "postgres" when started as root, and that user cannot enter ` +
          `${dir}: allow it (chmod o+x ${dir}), put the project in a folder other users can enter, ` +
          `or set DATABASE_URL to a PostgreSQL server`,
      );
    } else {
      const database = await startEmbeddedPostgres(dataDir);
      await database.stop();
    }
  });
});
