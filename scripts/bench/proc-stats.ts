/**
 * What a process tree uses, read from /proc: the resident set size of a process and its children (the
 * service's workers), the CPU time of a process and its children (PostgreSQL's postmaster and
 * backends), the postmaster's pid, and a process's peak RSS over a stretch of time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { memory } from './lifecycle.js';

/** The fields of /proc/PID/stat after the command name: [1] ppid, [11] utime, [12] stime, [13] cutime, [14] cstime. */
function statFields(pid: number | string): number[] {
  return readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /s, '')
    .split(' ')
    .map(Number);
}

/** Resident set size of a process and its children (the workers) in MB. */
export function treeRss(parent: number): number {
  let total = memory(parent).rss;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (statFields(entry)[1] === parent) total += memory(Number(entry)).rss;
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

/**
 * CPU seconds used by a process and its children (PostgreSQL's postmaster and backends, the service's
 * workers): its own, its live children's, and those of the children that have exited (its cutime and
 * cstime), so that a backend ending during a case does not take its time with it.
 */
export function treeCpuSeconds(parent: number): number {
  const own = statFields(parent);
  let total = (own[11]! + own[12]! + own[13]! + own[14]!) / 100;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const child = statFields(entry);
      if (child[1] === parent) total += (child[11]! + child[12]!) / 100;
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

/** The pid of the PostgreSQL whose data directory is dataDir (its postmaster.pid's first line). */
export function postmasterPid(dataDir: string): number {
  return Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** The service's peak RSS from now until stop(): sampled every 100 ms, and its high-water mark reset now. */
export function rssSampler(pid: number): { stop(): number } {
  let peak = memory(pid).rss;
  // Writing 5 to clear_refs resets VmHWM (the peak); without it, only the samples count.
  const reset = writeFile(`/proc/${pid}/clear_refs`, '5').then(
    () => true,
    () => false,
  );
  const timer = setInterval(() => (peak = Math.max(peak, memory(pid).rss)), 100);
  let hwmValid = false;
  void reset.then((ok) => (hwmValid = ok));
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, hwmValid ? memory(pid).hwm : 0);
    },
  };
}
