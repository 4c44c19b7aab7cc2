/**
 * Gathers work that arrives while the database is busy into batches: at most maxInFlight batches run
 * at once, and the items that arrive meanwhile wait in order and leave together in the next batch, so
 * under load one statement (and one commit) serves many items, and with nothing in flight an item
 * leaves at once, alone. Nothing waits longer than waitMillis for its turn.
 */
export interface BatcherOptions<T, R> {
  /** Runs one batch: the outcome of each item, in order (a value, or the error that item fails with). */
  run(items: T[]): Promise<PromiseSettledResult<R>[]>;
  /** Batches in the database at once. */
  maxInFlight: number;
  /** Items in a batch, at most. */
  maxItems: number;
  /** A batch's size in bytes, at most (a single item bigger than that still leaves, alone). */
  maxBytes: number;
  size(item: T): number;
  /**
   * Items with the same key (undefined: none) never share a batch nor run at once: the later one waits
   * until the earlier one's batch is done, so they run in the order they came.
   */
  key(item: T): string | undefined;
  /**
   * Whether a batch's failure means that the items waiting would fail the same way (the database cannot
   * be reached): they fail with it at once instead of each waiting for a statement of its own.
   */
  failsWaiting(err: unknown): boolean;
  /** How long an item may wait for its turn, and what it fails with then. */
  waitMillis: number;
  tooLong(): Error;
}

interface Waiting<T, R> {
  item: T;
  bytes: number;
  resolve(value: R): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
}

export class Batcher<T, R> {
  private readonly queue: Waiting<T, R>[] = [];
  private inFlight = 0;
  /** The keys of the items in the batches in flight. */
  private readonly running = new Set<string>();

  constructor(private readonly options: BatcherOptions<T, R>) {}

  /** Items waiting for their turn. */
  get waiting(): number {
    return this.queue.length;
  }

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const waiting: Waiting<T, R> = {
        item,
        bytes: this.options.size(item),
        resolve,
        reject,
        timer: setTimeout(() => {
          const at = this.queue.indexOf(waiting);
          if (at === -1) return;
          this.queue.splice(at, 1);
          reject(this.options.tooLong());
        }, this.options.waitMillis),
      };
      this.queue.push(waiting);
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const batch = this.take();
      // Everything waiting is behind a write of its key still in flight: its end pumps again.
      if (batch.length === 0) return;
      void this.send(batch);
    }
  }

  /** The next batch: the waiting items in order, skipping those whose key is taken, within the budgets. */
  private take(): Waiting<T, R>[] {
    const { maxItems, maxBytes, key } = this.options;
    const batch: Waiting<T, R>[] = [];
    /** Keys running, taken or passed over: an item waits behind an earlier one with its key, whatever kept that back. */
    const keys = new Set<string>(this.running);
    let bytes = 0;
    for (let i = 0; i < this.queue.length && batch.length < maxItems;) {
      const waiting = this.queue[i]!;
      const k = key(waiting.item);
      const taken = k !== undefined && keys.has(k);
      if (k !== undefined) keys.add(k);
      if (taken || (batch.length > 0 && bytes + waiting.bytes > maxBytes)) {
        i++;
        continue;
      }
      bytes += waiting.bytes;
      batch.push(waiting);
      this.queue.splice(i, 1);
      clearTimeout(waiting.timer);
    }
    return batch;
  }

  private async send(batch: Waiting<T, R>[]): Promise<void> {
    const keys = batch.map((w) => this.options.key(w.item)).filter((k) => k !== undefined);
    for (const k of keys) this.running.add(k);
    this.inFlight++;
    try {
      const outcomes = await this.options.run(batch.map((w) => w.item));
      batch.forEach((waiting, i) => {
        const outcome = outcomes[i]!;
        if (outcome.status === 'fulfilled') waiting.resolve(outcome.value);
        else waiting.reject(outcome.reason);
      });
    } catch (err) {
      for (const waiting of batch) waiting.reject(err);
      if (this.options.failsWaiting(err)) {
        for (const waiting of this.queue.splice(0)) {
          clearTimeout(waiting.timer);
          waiting.reject(err);
        }
      }
    } finally {
      for (const k of keys) this.running.delete(k);
      this.inFlight--;
      this.pump();
    }
  }
}
