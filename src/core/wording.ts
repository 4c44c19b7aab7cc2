/**
 * The product's words for what the transport reports in its own terms: each component owns its
 * fields' and ids' wording, and the app (src/wording.ts) hands the whole to the one error handler.
 */

/** What a field's failed schema keyword means, by field name then keyword (after the field's name). */
export type FieldWording = Record<string, Record<string, string>>;

export interface Wording {
  fields: FieldWording;
  /** The 404 of each id in a path, by parameter name: the same whether unknown, another company's or malformed. */
  notFound: Record<string, (id: string) => string>;
}
