/**
 * How much each company holds now (deliveries in flight, bytes, a cache's entries) and all of them
 * together. A company whose count falls to zero loses its entry, so the map holds only the companies
 * holding something: it never grows with every company ever seen. The bounds are the callers' own.
 */
export class CompanyCounts {
  private readonly counts = new Map<string, number>();
  private sum = 0;

  /** What all the companies hold together. */
  get total(): number {
    return this.sum;
  }

  /** What the company holds: 0 when it has no entry. */
  get(companyId: string): number {
    return this.counts.get(companyId) ?? 0;
  }

  /** The companies holding something, with what each holds, in the order they came. */
  entries(): IterableIterator<[string, number]> {
    return this.counts.entries();
  }

  add(companyId: string, n: number): void {
    this.change(companyId, n);
  }

  remove(companyId: string, n: number): void {
    this.change(companyId, -n);
  }

  private change(companyId: string, n: number): void {
    const now = this.get(companyId) + n;
    if (now === 0) this.counts.delete(companyId);
    else this.counts.set(companyId, now);
    this.sum += n;
  }
}
