// The shape of the product's wording for errors the transport reports in its own terms (a failed schema
// keyword, an unknown id): each component words its own (<component>-error-wording.ts).

/** What a field's failed schema keyword means, by field name then keyword (after the field's name). */
export type FieldWording = Record<string, Record<string, string>>;

/** Every field's and every path id's wording, as the one error handler uses them. */
export interface ErrorWording {
  fields: FieldWording;
  /** The 404 of each id in a path, by parameter name: the same whether unknown, another company's or malformed. */
  notFound: Record<string, (id: string) => string>;
}
