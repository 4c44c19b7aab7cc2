import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../src/local/index.js';

export interface PgBouncer {
  /** DATABASE_URL through PgBouncer: the same user, password and database as the server's URL. */
  url: string;
  pid: number;
  /** Everything PgBouncer wrote (it logs to stderr), for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

/** Whether the installed pgbouncer binary can be run (Debian's package `pgbouncer`). */
export function hasPgBouncer(): boolean {
  return spawnSync('pgbouncer', ['--version']).status === 0;
}

/**
 * Starts the system's PgBouncer in transaction mode on a free loopback port in front of the server
 * at `serverUrl`, with its own configuration in a temporary directory. As root it runs as the OS
 * user "postgres" (PgBouncer refuses to run as root). Stopped by its pid.
 */
export async function startPgBouncer(serverUrl: string, settings: Record<string, string> = {}): Promise<PgBouncer> {
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username);
  const password = decodeURIComponent(server.password);
  const database = server.pathname.slice(1) || user;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'intake-test-pgbouncer-'));
  await chmod(dir, 0o755);
  const port = await freePort();
  const quote = (s: string) => `"${s.replaceAll('"', '""')}"`;
  await writeFile(path.join(dir, 'userlist.txt'), `${quote(user)} ${quote(password)}\n`, { mode: 0o644 });
  const config = {
    listen_addr: '127.0.0.1',
    listen_port: String(port),
    unix_socket_dir: '',
    auth_type: 'scram-sha-256',
    auth_file: path.join(dir, 'userlist.txt'),
    pool_mode: 'transaction',
    // Fewer server connections than the two services' pools together, so transactions of one
    // client really move between server connections.
    default_pool_size: '4',
    max_client_conn: '200',
    ...settings,
  };
  await writeFile(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `${database} = host=${server.hostname} port=${server.port} dbname=${database}`,
      '[pgbouncer]',
      ...Object.entries(config).map(([k, v]) => `${k} = ${v}`),
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child = spawn('pgbouncer', [...(asRoot ? ['-u', 'postgres'] : []), path.join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // SIGINT: PgBouncer's safe shutdown.
      child.kill('SIGINT');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  // Listening when a TCP connection is accepted; bounded, and its output in the error otherwise.
  for (let i = 0; ; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) break;
    if (i >= 100 || child.exitCode !== null) {
      await stop();
      throw new Error(`pgbouncer did not start: ${output}`);
    }
    await sleep(50);
  }
  const url = new URL(serverUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return { url: url.toString(), pid: child.pid!, log: () => output, stop };
}
