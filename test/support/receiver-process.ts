import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

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
