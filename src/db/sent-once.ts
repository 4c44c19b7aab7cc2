/**
 * A query parameter that pg reads once, when it writes the query to the connection, and holds its
 * text no longer. A query keeps its parameters until the database answers: a large write's text (a
 * maximal report's JSON) kept that long outlives a young-generation collection and is promoted, freed
 * only by a full one, whose pauses every company's requests wait for. Released once sent, it dies young.
 */
export class SentOnce {
  #text: string | undefined;

  constructor(text: string) {
    this.#text = text;
  }

  /** Whether the text is still held: not sent yet. */
  get held(): boolean {
    return this.#text !== undefined;
  }

  /** pg's hook for a parameter's value (utils.prepareValue): the text, once; read again, it throws, never sending NULL instead. */
  toPostgres(): string {
    const text = this.#text;
    if (text === undefined) throw new Error('a SentOnce parameter was read twice');
    this.#text = undefined;
    return text;
  }
}
