import { performance } from 'node:perf_hooks';
import { CompanyCounts } from '../../core/company-counts.js';
import type { LoopLoad } from './loop-load.js';

// Admission: how one process shares itself between companies. Each company gets a bounded number of
// requests and bytes in flight (more while it is alone, so nobody loses capacity nobody else wants); past
// its share a request waits in its company's own queue, so a flood queues behind itself, never ahead of
// another company. While the event loop is busy, a company that moved more than its share of bytes lately
// waits too: bytes are the loop's time. Queues are bounded in length and time, and waits end at spread-out
// moments so a refused flood's bodies are not all read at once.

export interface AdmissionOptions {
  /** Requests of one company handled at once while other companies sent requests within the last second. */
  perCompany: number;
  /** Requests of one company handled at once while it is the only one (default: perCompany). */
  perCompanyAlone?: number;
  /**
   * Bytes one company's requests may move at once while other companies are at work (a request always
   * fits when none of its company's is in flight).
   */
  companyBytes: number;
  /** Bytes the requests of the whole process may move at once. */
  processBytes: number;
  /** Requests of one company waiting for their turn, at most; past it a request is refused at once. */
  maxWaiting: number;
  /** How long a request waits for its turn at most before it is refused (at least half of it: see above). */
  waitMillis: number;
  /** The event loop's load (default: never busy). */
  loop?: LoopLoad;
  /** Where each wait's share of waitMillis above a half is drawn from, in [0, 1) (default: Math.random). */
  random?: () => number;
}

/** How many times companyBytes a company alone may move (its extra slots are set by perCompanyAlone). */
export const LENT_BYTES = 4;

/** Why a request was not admitted: its company's queue is full, or it waited waitMillis. */
export class AdmissionRefused extends Error {
  constructor(readonly reason: 'queue full' | 'waited too long') {
    super(reason);
  }
}

interface Waiter {
  bytes: number;
  grant(release: () => void): void;
  timer: NodeJS.Timeout;
}

/** A company that asked for admission within this long is at work: the others' shares shrink to perCompany. */
const ACTIVE_MS = 1_000;
const PRUNE_MS = 100;
/** The bytes a company moved lately: each admission's, halved every COST_HALF_LIFE_MS, plus REQUEST_COST for any request. */
const COST_HALF_LIFE_MS = 1_000;
const REQUEST_COST = 4 * 1024;
/** A company waiting for a busy loop is looked at again this soon (nothing else may end meanwhile). */
const LOOP_RETRY_MS = 5;

export class Admission {
  /** Requests in flight, and the bytes they move, per company and in all. */
  private readonly requests = new CompanyCounts();
  private readonly bytes = new CompanyCounts();
  /** Each company's requests waiting, in order; the companies in the order they are served next (rotated on each grant). */
  private readonly queues = new Map<string, Waiter[]>();
  private pumpScheduled = false;
  /** When each company last asked for admission (Date.now()); older than ACTIVE_MS are dropped now and then. */
  private readonly lastSeen = new Map<string, number>();
  private prunedAt = 0;
  /** The bytes each company at work moved lately (decayed to `at`, performance.now()). */
  private readonly recent = new Map<string, { bytes: number; at: number }>();
  private loopRetry: NodeJS.Timeout | undefined;

  constructor(private readonly options: AdmissionOptions) {}

  /** Admits a request moving `bytes` at once if it fits now: the function that ends it, or undefined. */
  tryAdmit(companyId: string, bytes: number): (() => void) | undefined {
    this.seen(companyId);
    if (!this.queues.has(companyId) && this.fits(companyId, bytes)) return this.take(companyId, bytes);
    return undefined;
  }

  /** Admits a request moving `bytes`: resolves with the function that ends it, or rejects with AdmissionRefused. */
  admit(companyId: string, bytes: number): Promise<() => void> {
    const admitted = this.tryAdmit(companyId, bytes);
    if (admitted) return Promise.resolve(admitted);
    const queue = this.queues.get(companyId) ?? [];
    if (queue.length >= this.options.maxWaiting) return Promise.reject(new AdmissionRefused('queue full'));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        bytes,
        grant: resolve,
        timer: setTimeout(() => {
          queue.splice(queue.indexOf(waiter), 1);
          if (queue.length === 0) this.queues.delete(companyId);
          reject(new AdmissionRefused('waited too long'));
        }, this.waitFor()),
      };
      queue.push(waiter);
      this.queues.set(companyId, queue);
    });
  }

  /** How long the next request may wait: between half and all of waitMillis, its own draw. */
  private waitFor(): number {
    const { waitMillis, random = Math.random } = this.options;
    return (waitMillis / 2) * (1 + random());
  }

  /** Requests of the company handled now and waiting (for tests and metrics). */
  load(companyId: string): { inFlight: number; waiting: number; bytes: number } {
    const waiting = this.queues.get(companyId)?.length ?? 0;
    return { inFlight: this.requests.get(companyId), waiting, bytes: this.bytes.get(companyId) };
  }

  /** Notes the company at work; forgets, at most every PRUNE_MS, the companies idle for ACTIVE_MS. */
  private seen(companyId: string): void {
    const now = Date.now();
    this.lastSeen.set(companyId, now);
    if (now - this.prunedAt < PRUNE_MS) return;
    this.prunedAt = now;
    for (const [id, at] of this.lastSeen) {
      if (now - at > ACTIVE_MS) {
        this.lastSeen.delete(id);
        this.recent.delete(id);
      }
    }
  }

  private fits(companyId: string, bytes: number): boolean {
    const { perCompany, perCompanyAlone = perCompany, companyBytes, processBytes } = this.options;
    // A company alone is lent more slots and bytes: as much as another company's first requests may find ahead.
    const others = this.lastSeen.size > 1;
    const inFlight = this.requests.get(companyId);
    return (
      inFlight < (others ? perCompany : perCompanyAlone) &&
      (inFlight === 0 || this.bytes.get(companyId) + bytes <= (others ? 1 : LENT_BYTES) * companyBytes) &&
      (this.bytes.total === 0 || this.bytes.total + bytes <= processBytes) &&
      !(others && this.overLoopShare(companyId))
    );
  }

  /** Whether the loop is busy and the company moved more than its share of the recent bytes (then it is looked at again soon). */
  private overLoopShare(companyId: string): boolean {
    if (!this.options.loop?.busy()) return false;
    const now = performance.now();
    let total = 0;
    for (const id of this.lastSeen.keys()) total += this.recentBytes(id, now);
    const over = this.recentBytes(companyId, now) > total / this.lastSeen.size;
    if (over) this.loopRetry ??= setTimeout(() => ((this.loopRetry = undefined), this.pump()), LOOP_RETRY_MS).unref();
    return over;
  }

  private recentBytes(companyId: string, now: number): number {
    const recent = this.recent.get(companyId);
    return recent ? recent.bytes * 0.5 ** ((now - recent.at) / COST_HALF_LIFE_MS) : 0;
  }

  private take(companyId: string, bytes: number): () => void {
    const now = performance.now();
    this.recent.set(companyId, { bytes: this.recentBytes(companyId, now) + bytes + REQUEST_COST, at: now });
    this.requests.add(companyId, 1);
    this.bytes.add(companyId, bytes);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.requests.remove(companyId, 1);
      this.bytes.remove(companyId, bytes);
      this.schedulePump();
    };
  }

  /**
   * Waiting requests are granted from the event loop's check phase (setImmediate), not in the turn the
   * last one ended: granting at once would run a company's whole queue without the loop ever reading
   * another company's sockets.
   */
  private schedulePump(): void {
    if (this.pumpScheduled || this.queues.size === 0) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** Grants waiting requests that fit now, one company at a time in turn, so freed bytes are shared out fairly. */
  private pump(): void {
    for (let granted = true; granted;) {
      granted = false;
      for (const [companyId, queue] of [...this.queues]) {
        const next = queue[0];
        if (!next || !this.fits(companyId, next.bytes)) continue;
        queue.shift();
        clearTimeout(next.timer);
        // To the back of the line: the next grant goes to another company first.
        this.queues.delete(companyId);
        if (queue.length > 0) this.queues.set(companyId, queue);
        next.grant(this.take(companyId, next.bytes));
        granted = true;
      }
    }
  }
}
