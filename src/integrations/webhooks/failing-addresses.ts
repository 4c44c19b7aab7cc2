// Companies whose last background delivery attempt in this process failed: they get one delivery slot
// at a time, none for a poll after a failure, and together at most half of the worker's slots, so dead
// receivers cannot take the slots of companies whose receivers respond. Entries expire after a minute.

import type { CompanyCounts } from '../../core/company-counts.js';

export class FailingAddresses {
  private readonly lastFailure = new Map<string, number>();

  constructor(private readonly pollMs: number) {}

  /** Records how a company's attempt ended. */
  record(companyId: string, delivered: boolean, now = Date.now()): void {
    if (delivered) this.lastFailure.delete(companyId);
    else this.lastFailure.set(companyId, now);
  }

  /**
   * The slots each company holds, as the take counts them: its attempts in flight, or, for a company
   * failing now, all its slots but one (none within a poll of its last failure).
   */
  busy(inFlight: CompanyCounts, share: number, now = Date.now()): [string, number][] {
    const held = new Map(inFlight.entries());
    for (const [companyId, at] of this.failingNow(now)) {
      const paced = now - at < this.pollMs ? share : share - 1;
      held.set(companyId, Math.max(held.get(companyId) ?? 0, paced));
    }
    return [...held.entries()];
  }

  /**
   * The companies failing now, and how many more of the worker's `slots` they may take together: half
   * of them (one at least, so that a dead receiver is still probed) less those their attempts hold.
   */
  room(inFlight: CompanyCounts, slots: number, now = Date.now()): { companies: string[]; free: number } {
    const companies = this.failingNow(now).map(([companyId]) => companyId);
    const held = companies.reduce((sum, companyId) => sum + inFlight.get(companyId), 0);
    return { companies, free: Math.max(0, Math.max(1, Math.floor(slots / 2)) - held) };
  }

  private failingNow(now: number): [string, number][] {
    for (const [companyId, at] of this.lastFailure) if (now - at > STALE_MS) this.lastFailure.delete(companyId);
    return [...this.lastFailure.entries()];
  }
}

/** A failure this old no longer paces its company. */
const STALE_MS = 60_000;
