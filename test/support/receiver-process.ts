import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createApp } from '../../src/app.js';
import { createNotifier, type Notifier } from '../../src/integrations/webhooks/notifier.js';
import { listen } from '../../src/platform/http/listen.js';
import { APP_TOKEN, appDeps, pool } from './harness.js';

const run = promisify(execFile);

/** `npm run webhook-receiver` as a process of the walk-through tests. */

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Receiver {
  child: ChildProcess;
  port: number;
  /** Resolves with the next line of output matching, or rejects when the receiver exits first. */
  next(pattern: RegExp): Promise<string>;
}

/** `npm run webhook-receiver` as a process of its own (node --import tsx, as npm runs it), on 127.0.0.1. */
export async function startReceiver(secrets: string[], port = 0): Promise<Receiver> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/webhook-receiver.ts'], {
    cwd: ROOT,
    env: { ...process.env, WEBHOOK_SECRET: secrets.join(','), RECEIVER_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const wake of waiters.splice(0)) wake();
  });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`the receiver exited (${code}): ${lines.join('\n')}`))),
  );
  exited.catch(() => undefined);
  let read = 0;
  const next = async (pattern: RegExp): Promise<string> => {
    for (;;) {
      const index = lines.findIndex((line, i) => i >= read && pattern.test(line));
      if (index >= 0) {
        read = index + 1;
        return lines[index]!;
      }
      await Promise.race([new Promise<void>((wake) => waiters.push(wake)), exited]);
    }
  };
  try {
    const listening = await next(/^Receiving webhooks on https:\/\/127\.0\.0\.1:(\d+)\/webhook/);
    return { child, port: Number(/:(\d+)\//.exec(listening)![1]), next };
  } catch (err) {
    await stop({ child });
    throw err;
  }
}

export async function stop({ child }: { child: ChildProcess }): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(child.pid!, 'SIGTERM');
  await exited;
}

/** What the walk-throughs read of `npm run admin`'s JSON answers. */
export interface AdminAnswer {
  key: string;
  secret: string;
  previousSecretExpiresAt: string;
  [field: string]: unknown;
}

/** A walk-through's stage: the receiver, a service on the test database that trusts it, and `npm run admin` against that service. */
export interface Stage {
  receiver: Receiver;
  service: Server;
  /** The service's notifier, which trusts the receiver: a background worker of the test's may send with it. */
  notifier: Notifier;
  baseUrl: string;
  /** `npm run admin -- …args`: its JSON answer. */
  admin(...args: string[]): Promise<AdminAnswer>;
}

/**
 * Starts the receiver (its first start writes the certificate the service then trusts, as
 * NODE_EXTRA_CA_CERTS does in docs/walk-throughs.md) and a service allowed to reach it on 127.0.0.1.
 */
export async function startStage(): Promise<Stage> {
  const receiver = await startReceiver(['whsec_bm90LXlldC1zZXQ=']);
  const ca = await readFile(path.join(ROOT, '.data/webhook-receiver/cert.pem'), 'utf8');
  const notifier = createNotifier({
    allowedCidrs: ['127.0.0.1/32'],
    timeoutMs: 10_000,
    ca: [ca],
    maxInFlight: 32,
    maxInFlightPerCompany: 4,
  });
  const service = await listen(createApp(appDeps(pool(), { notifier })), 0, '127.0.0.1');
  const baseUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  return { receiver, service, notifier, baseUrl, admin: adminOf(baseUrl) };
}

/** `npm run admin -- …args` against the service at baseUrl (node --import tsx, as npm runs it): its JSON answer. */
export function adminOf(baseUrl: string): Stage['admin'] {
  const env = { ...process.env, API_URL: baseUrl, APP_TOKEN };
  return async (...args: string[]) =>
    JSON.parse(
      (await run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], { cwd: ROOT, env })).stdout,
    ) as AdminAnswer;
}
