import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../src/ports-and-pids.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const PRISM = path.join(ROOT, 'node_modules/.bin/prism');

/** One finding of Prism's validator, as it reports them in the `sl-violations` response header. */
export interface Violation {
  location: (string | number)[];
  severity: string;
  code: string | number;
  message: string;
}

export interface PrismProxy {
  baseUrl: string;
  stop(): Promise<void>;
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) throw new Error(`prism exited with ${child.exitCode}:\n${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.end(() => resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`prism did not listen on ${port} within 30 s:\n${output()}`);
}

/**
 * Stoplight Prism as a validating proxy in front of `upstream`. Without --errors it forwards every
 * request, also invalid ones, so the service's own answer can be checked, and it reports each request
 * and response violation of the document in the `sl-violations` header.
 */
export async function startPrismProxy(document: string, upstream: string): Promise<PrismProxy> {
  const port = await freePort();
  const child = spawn(PRISM, ['proxy', document, upstream, '--host', '127.0.0.1', '--port', String(port)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const keep = (chunk: Buffer) => (log = (log + chunk.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitForPort(port, child, () => log);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGTERM');
      await exited;
    },
  };
}

export function violationsOf(res: Response): Violation[] {
  const header = res.headers.get('sl-violations');
  return header ? (JSON.parse(header) as Violation[]) : [];
}
