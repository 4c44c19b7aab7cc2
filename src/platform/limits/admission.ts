/**
 * Admission of each company's requests to the shared process: at most `perCompany` of a company's
 * requests are handled at once while other companies are at work too (`perCompanyAlone` while it is the
 * only one: capacity nobody else asks for is lent, so one company alone loses nothing), and the bytes
 * they move (their bodies, and the answers they are expected to send) are bounded for each company
 * (while others are at work) and for the process. A request past its company's share waits its turn in its company's
 * queue (first come, first served within the company; companies served in turn when the process's
 * bytes free up), so one company's flood queues behind itself and never ahead of another company.
 * The queue is bounded in length and in time: past either the request is refused.
 */
export interface AdmissionOptions {
  /** Requests of one company handled at once while other companies sent requests within the last second. */
  perCompany: number;
  /** Requests of one company handled at once while it is the only one (default: perCompany). */
  perCompanyAlone?: number;
  /** Bytes one company's requests may move at once (a single request always fits when it is alone). */
  companyBytes: number;
  /** Bytes the process's requests may move at once (idem). */
  processBytes: number;
  /** Requests of one company waiting for their turn, at most; past it a request is refused at once. */
  maxWaiting: number;
  /** How long a request waits for its turn before it is refused. */
  waitMillis: number;
}

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

interface Share {
  inFlight: number;
  bytes: number;
  queue: Waiter[];
}

/** A company that asked for admission within this long is at work: the others' shares shrink to perCompany. */
const ACTIVE_MS = 1_000;
const PRUNE_MS = 100;

export class Admission {
  private readonly shares = new Map<string, Share>();
  /** Companies with requests waiting, in the order they are served next (rotated on each grant). */
  private readonly turns = new Set<string>();
  private bytes = 0;
  private pumpScheduled = false;
  /** When each company last asked for admission (Date.now()); older than ACTIVE_MS are dropped now and then. */
  private readonly lastSeen = new Map<string, number>();
  private prunedAt = 0;

  constructor(private readonly options: AdmissionOptions) {}

  /** Admits a request moving `bytes` at once if it fits now: the function that ends it, or undefined. */
  tryAdmit(companyId: string, bytes: number): (() => void) | undefined {
    this.seen(companyId);
    const share = this.shareOf(companyId);
    if (share.queue.length === 0 && this.fits(share, bytes)) return this.take(companyId, share, bytes);
    this.forgetIfIdle(companyId, share);
    return undefined;
  }

  /** Admits a request moving `bytes`: resolves with the function that ends it, or rejects with AdmissionRefused. */
  admit(companyId: string, bytes: number): Promise<() => void> {
    const admitted = this.tryAdmit(companyId, bytes);
    if (admitted) return Promise.resolve(admitted);
    const share = this.shareOf(companyId);
    if (share.queue.length >= this.options.maxWaiting) {
      this.forgetIfIdle(companyId, share);
      return Promise.reject(new AdmissionRefused('queue full'));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        bytes,
        grant: resolve,
        timer: setTimeout(() => {
          share.queue.splice(share.queue.indexOf(waiter), 1);
          if (share.queue.length === 0) this.turns.delete(companyId);
          this.forgetIfIdle(companyId, share);
          reject(new AdmissionRefused('waited too long'));
        }, this.options.waitMillis),
      };
      share.queue.push(waiter);
      this.turns.add(companyId);
    });
  }

  /** Requests of the company handled now and waiting (for tests and metrics). */
  load(companyId: string): { inFlight: number; waiting: number; bytes: number } {
    const share = this.shares.get(companyId);
    return { inFlight: share?.inFlight ?? 0, waiting: share?.queue.length ?? 0, bytes: share?.bytes ?? 0 };
  }

  private shareOf(companyId: string): Share {
    let share = this.shares.get(companyId);
    if (!share) this.shares.set(companyId, (share = { inFlight: 0, bytes: 0, queue: [] }));
    return share;
  }

  /** Notes the company at work; forgets, at most every PRUNE_MS, the companies idle for ACTIVE_MS. */
  private seen(companyId: string): void {
    const now = Date.now();
    this.lastSeen.set(companyId, now);
    if (now - this.prunedAt < PRUNE_MS) return;
    this.prunedAt = now;
    for (const [id, at] of this.lastSeen) if (now - at > ACTIVE_MS) this.lastSeen.delete(id);
  }

  private fits(share: Share, bytes: number): boolean {
    const { perCompany, perCompanyAlone = perCompany, companyBytes, processBytes } = this.options;
    // A company alone is bounded by the process's bytes only: its share is lent as its places are.
    const others = this.lastSeen.size > 1;
    return (
      share.inFlight < (others ? perCompany : perCompanyAlone) &&
      (!others || share.inFlight === 0 || share.bytes + bytes <= companyBytes) &&
      (this.bytes === 0 || this.bytes + bytes <= processBytes)
    );
  }

  private take(companyId: string, share: Share, bytes: number): () => void {
    share.inFlight++;
    share.bytes += bytes;
    this.bytes += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      share.inFlight--;
      share.bytes -= bytes;
      this.bytes -= bytes;
      this.forgetIfIdle(companyId, share);
      this.schedulePump();
    };
  }

  /**
   * Waiting requests are granted from the event loop's check phase, never in the same turn as the
   * request that ended: a grant runs its request on in microtasks, so granting at once would run a
   * company's whole queue one request after another without the loop ever reading another company's
   * sockets (measured: a flood queued behind one place still took every other answer 20-40 ms).
   */
  private schedulePump(): void {
    if (this.pumpScheduled || this.turns.size === 0) return;
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
      for (const companyId of [...this.turns]) {
        const share = this.shares.get(companyId)!;
        const next = share.queue[0];
        if (!next || !this.fits(share, next.bytes)) continue;
        share.queue.shift();
        clearTimeout(next.timer);
        // To the back of the line: the next grant goes to another company first.
        this.turns.delete(companyId);
        if (share.queue.length > 0) this.turns.add(companyId);
        next.grant(this.take(companyId, share, next.bytes));
        granted = true;
      }
    }
  }

  private forgetIfIdle(companyId: string, share: Share): void {
    if (share.inFlight === 0 && share.queue.length === 0) this.shares.delete(companyId);
  }
}
