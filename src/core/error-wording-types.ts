/**
 * The shape of the product's words for the refusals the transport reports in its own terms (a failed
 * schema keyword, an id that finds nothing): each component words its own fields and ids
 * (<component>-error-wording.ts), and src/error-wording.ts hands the whole to the one error handler.
 */

/** What a field's failed schema keyword means, by field name then keyword (after the field's name). */
export type FieldWording = Record<string, Record<string, string>>;

/** Every field's and every path id's wording, as the one error handler uses them. */
export interface ErrorWording {
  fields: FieldWording;
  /** The 404 of each id in a path, by parameter name: the same whether unknown, another company's or malformed. */
  notFound: Record<string, (id: string) => string>;
}
