// Batches work per group (a company) while the database is busy: one batch in flight per group, items
// arriving meanwhile leave together in the next one, so under load one statement serves many items.
// Groups never share a batch and take turns for slots, so one group's slow batch holds back only itself.

export interface BatcherOptions<T, R> {
  /** Runs one batch: the outcome of each item, in order (a value, or the error that item fails with). */
  run(items: T[]): Promise<PromiseSettledResult<R>[]>;
  /** Batches in the database at once, all groups together. */
  maxInFlight: number;
  /** Items in a batch, at most. */
  maxItems: number;
  /** A batch's size in bytes, at most (a single item bigger than that still leaves, alone). */
  maxBytes: number;
  size(item: T): number;
  /** The group of an item: items of different groups never share a batch. */
  group(item: T): string;
  /**
   * Items of one group with the same key (undefined: none) leave in the order they came: a later one
   * never leaves in an earlier batch than one before it (a group runs one batch at a time). They may
   * share a batch, in that order: run() applies them in the order of the batch.
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
  /** Each group's items waiting, in order of arrival (only groups with some). */
  private readonly queues = new Map<string, Waiting<T, R>[]>();
  /** Groups with items waiting and no batch in flight, in the order they take their turns. */
  private readonly turns = new Set<string>();
  /** Groups with a batch in flight. */
  private readonly running = new Set<string>();
  private count = 0;

  constructor(private readonly options: BatcherOptions<T, R>) {}

  /** Items waiting for their turn. */
  get waiting(): number {
    return this.count;
  }

  submit(item: T): Promise<R> {
    const group = this.options.group(item);
    return new Promise<R>((resolve, reject) => {
      const waiting: Waiting<T, R> = {
        item,
        bytes: this.options.size(item),
        resolve,
        reject,
        timer: setTimeout(() => {
          if (this.remove(group, waiting)) reject(this.options.tooLong());
        }, this.options.waitMillis),
      };
      const queue = this.queues.get(group);
      if (queue) queue.push(waiting);
      else this.queues.set(group, [waiting]);
      this.count++;
      if (!this.running.has(group)) this.turns.add(group);
      this.pump();
    });
  }

  /** Takes an item that waited too long out of its queue; false if it already left. */
  private remove(group: string, waiting: Waiting<T, R>): boolean {
    const queue = this.queues.get(group);
    const at = queue?.indexOf(waiting) ?? -1;
    if (at === -1) return false;
    queue!.splice(at, 1);
    this.count--;
    if (queue!.length === 0) {
      this.queues.delete(group);
      this.turns.delete(group);
    }
    return true;
  }

  private pump(): void {
    for (const group of this.turns) {
      if (this.running.size >= this.options.maxInFlight) return;
      this.turns.delete(group);
      void this.send(group, this.take(group));
    }
  }

  /**
   * A group's next batch: its waiting items in order within the budgets, skipping those behind an item
   * of their key that the budgets left out.
   */
  private take(group: string): Waiting<T, R>[] {
    const { maxItems, maxBytes, key } = this.options;
    const queue = this.queues.get(group)!;
    const batch: Waiting<T, R>[] = [];
    /** Keys of items left out: an item never overtakes an earlier one of its key. */
    const left = new Set<string>();
    let bytes = 0;
    for (let i = 0; i < queue.length && batch.length < maxItems;) {
      const waiting = queue[i]!;
      const k = key(waiting.item);
      if ((k !== undefined && left.has(k)) || (batch.length > 0 && bytes + waiting.bytes > maxBytes)) {
        if (k !== undefined) left.add(k);
        i++;
        continue;
      }
      bytes += waiting.bytes;
      batch.push(waiting);
      queue.splice(i, 1);
      clearTimeout(waiting.timer);
    }
    this.count -= batch.length;
    if (queue.length === 0) this.queues.delete(group);
    return batch;
  }

  private async send(group: string, batch: Waiting<T, R>[]): Promise<void> {
    this.running.add(group);
    try {
      const outcomes = await this.options.run(batch.map((w) => w.item));
      batch.forEach((waiting, i) => {
        const outcome = outcomes[i]!;
        if (outcome.status === 'fulfilled') waiting.resolve(outcome.value);
        else waiting.reject(outcome.reason);
      });
    } catch (err) {
      for (const waiting of batch) waiting.reject(err);
      if (this.options.failsWaiting(err)) this.failAll(err);
    } finally {
      this.running.delete(group);
      // Its next batch queues behind the groups that waited meanwhile.
      if (this.queues.has(group)) this.turns.add(group);
      this.pump();
    }
  }

  /** Fails every item waiting, of every group: the database cannot be reached. */
  private failAll(err: unknown): void {
    for (const queue of this.queues.values()) {
      for (const waiting of queue) {
        clearTimeout(waiting.timer);
        waiting.reject(err);
      }
    }
    this.queues.clear();
    this.turns.clear();
    this.count = 0;
  }
}
