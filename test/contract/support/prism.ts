import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../src/local/index.js';

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
  /** Why requests to it fail when it has exited: its exit and the end of its output (undefined while it runs). */
  gone(): string | undefined;
  stop(): Promise<void>;
}

/**
 * Prism on a free port, once it says it listens there. Bounded: at most 60 s. A port found free
 * can be taken by another process before Prism binds it (other workers and test runs on this machine
 * open ports all the time), and a TCP probe would then reach that process: so the proof is Prism's own
 * line, and a port taken meanwhile (EADDRINUSE) is tried again with another.
 */
async function startPrism(
  args: string[],
): Promise<{ child: ChildProcess; port: number; exited: Promise<void>; log: () => string }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(PRISM, [...args, '--host', '127.0.0.1', '--port', String(port)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const listening = new Promise<boolean>((resolve) => {
      const keep = (chunk: Buffer) => {
        log = (log + chunk.toString()).slice(-20_000);
        if (log.includes(`Prism is listening on http://127.0.0.1:${port}`)) resolve(true);
      };
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
      void exited.then(() => resolve(false));
    });
    const timer = new AbortController();
    const started = await Promise.race([listening, sleep(60_000, false, { signal: timer.signal })]);
    timer.abort();
    if (started) return { child, port, exited, log: () => log };
    child.kill('SIGKILL');
    await exited;
    if (!log.includes('EADDRINUSE') || attempt === 3)
      throw new Error(`prism did not listen on ${port} (exit ${child.exitCode}):\n${log}`);
  }
}

/**
 * Stoplight Prism as a validating proxy in front of `upstream`. Without --errors it forwards every
 * request, also invalid ones, so the service's own answer can be checked, and it reports each request
 * and response violation of the document in the `sl-violations` header.
 */
export async function startPrismProxy(document: string, upstream: string): Promise<PrismProxy> {
  const { child, port, exited, log } = await startPrism(['proxy', document, upstream]);
  let stopping = false;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    gone: () =>
      child.exitCode === null && child.signalCode === null
        ? undefined
        : `prism exited (${child.exitCode ?? child.signalCode}${stopping ? ', stopped' : ''}); its output ended:\n${log().slice(-2_000)}`,
    stop: async () => {
      stopping = true;
      if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGTERM');
      await exited;
    },
  };
}

export function violationsOf(res: Response): Violation[] {
  const header = res.headers.get('sl-violations');
  return header ? (JSON.parse(header) as Violation[]) : [];
}
