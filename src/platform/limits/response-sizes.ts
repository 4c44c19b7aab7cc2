// The recent size of each company's responses of each kind, the estimate of the next one's bytes:
// admission counts it with the request body, so a company of maximal pages has fewer in flight.

export class ResponseSizes {
  /** Per company, per kind, the weighted average of its responses' sizes; the company seen first goes first. */
  private readonly sizes = new Map<string, Map<string, number>>();

  constructor(private readonly maxCompanies = 10_000) {}

  /** The bytes the company's next response of this kind is expected to weigh; undefined until one was seen. */
  expected(companyId: string, kind: string): number | undefined {
    return this.sizes.get(companyId)?.get(kind);
  }

  /** Records a response's size: the estimate follows the latest responses (each weighs a quarter). */
  record(companyId: string, kind: string, bytes: number): void {
    let kinds = this.sizes.get(companyId);
    if (!kinds) {
      if (this.sizes.size >= this.maxCompanies) this.sizes.delete(this.sizes.keys().next().value!);
      this.sizes.set(companyId, (kinds = new Map()));
    }
    const before = kinds.get(kind);
    kinds.set(kind, before === undefined ? bytes : before + (bytes - before) / 4);
  }
}
