/**
 * What each company's answers of each kind have weighed lately, in bytes: the estimate of what its next
 * answer of that kind will move. Admission counts it with the request body, so a company whose answers
 * are maximal pages (about 1 MiB each: reading, checking and sending one is a long stretch of the event
 * loop's one thread) has as few of them in flight as its byte share allows, while a company of small answers
 * is held only by the count of requests in flight.
 */
export class AnswerSizes {
  /** Per company, per kind, the weighted average of its answers' sizes; the company seen first goes first. */
  private readonly sizes = new Map<string, Map<string, number>>();

  constructor(private readonly maxCompanies = 10_000) {}

  /** The bytes the company's next answer of this kind is expected to weigh; undefined until one was seen. */
  expected(companyId: string, kind: string): number | undefined {
    return this.sizes.get(companyId)?.get(kind);
  }

  /** Records an answer's size: the estimate follows the latest answers (each weighs a quarter). */
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
