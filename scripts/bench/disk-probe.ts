/**
 * The machine's own disk stalls, for `npm run bench:fairness`: a process of its own that writes and
 * fsyncs 512 bytes to a file in the temporary directory (where the benchmark's PostgreSQL keeps its
 * data) every 100 ms, and prints `<Date.now()> <ms>` for each fsync that took STALL_MS or more, until
 * it is stopped (SIGTERM). A commit waits for the same disk: a stall shows in B's creates whatever A
 * does, so the benchmark prints the stalls of each phase beside its figures.
 *
 *   node --import tsx scripts/bench/disk-probe.ts
 */
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const STALL_MS = 20;
const EVERY_MS = 100;

const dir = mkdtempSync(path.join(os.tmpdir(), 'intake-disk-probe-'));
const fd = openSync(path.join(dir, 'probe'), 'w');
const block = Buffer.alloc(512, 0x78);
const timer = setInterval(() => {
  const start = performance.now();
  writeSync(fd, block);
  fsyncSync(fd);
  const ms = performance.now() - start;
  if (ms >= STALL_MS) process.stdout.write(`${Date.now()} ${ms.toFixed(0)}\n`);
}, EVERY_MS);
const stop = () => {
  clearInterval(timer);
  closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGTERM', stop);
