// A query parameter whose text pg drops once written to the connection: a large write's text kept until
// the response arrives would be promoted to the old generation and freed only by a full collection.

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
