import { readFileSync } from 'node:fs';
import path from 'node:path';
import { childrenOf } from './processes.js';

/**
 * Freezes a PostgreSQL cluster as a hung server would be: SIGSTOP to its postmaster and every process
 * it started (backends, checkpointer, …). Connections stay open and the kernel still accepts new ones,
 * but nothing answers. Returns thaw(), which sends SIGCONT to each; call it in a finally or after hook.
 * A process exit thaws too, so a failed run never leaves a cluster stopped.
 */
export function freezeCluster(dataDir: string): () => void {
  const postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const stopped: number[] = [];
  const thaw = () => {
    process.removeListener('exit', thaw);
    for (const pid of stopped.splice(0).reverse()) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', thaw);
  process.kill(postmaster, 'SIGSTOP');
  stopped.push(postmaster);
  // The stopped postmaster forks no more; a second pass catches a child it forked while being stopped.
  for (let pass = 0; pass < 5; pass++) {
    const fresh = childrenOf(postmaster).filter((pid) => !stopped.includes(pid));
    if (fresh.length === 0) break;
    for (const pid of fresh) {
      process.kill(pid, 'SIGSTOP');
      stopped.push(pid);
    }
  }
  return thaw;
}
