import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** Whether the process's one thread of JavaScript has lately been busier than it should be. */
export interface LoopLoad {
  busy(): boolean;
}

/** Shortest span a utilisation is measured over: shorter ones say more about one callback than about the load. */
const WINDOW_MS = 20;

/**
 * The event loop's utilisation (the share of its time spent running callbacks rather than waiting for
 * I/O: performance.eventLoopUtilization), measured over the span since the previous measurement
 * (WINDOW_MS at least), on demand: no timer of its own. Busy past `threshold`: every request of every
 * company then waits longer for the loop at each of its steps (its socket read, its database results,
 * its write), the more so the nearer the loop is to full.
 */
export class EventLoopLoad implements LoopLoad {
  private mark: EventLoopUtilization = performance.eventLoopUtilization();
  private at = performance.now();
  private level = 0;

  constructor(private readonly threshold: number) {}

  busy(): boolean {
    const now = performance.now();
    if (now - this.at >= WINDOW_MS) {
      const next = performance.eventLoopUtilization();
      this.level = performance.eventLoopUtilization(next, this.mark).utilization;
      this.mark = next;
      this.at = now;
    }
    return this.level > this.threshold;
  }
}
