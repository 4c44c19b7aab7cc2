/**
 * Parameters of one statement addressed by name. node-postgres binds them by position ($1, $2 …), so a
 * statement whose text is assembled from parts would otherwise tie every part to the order of one
 * values array. The text refers to `ref(name, type)`; each call passes its values as an object, and
 * `values()` puts them in the order the text numbered them.
 */
export interface NamedParameters {
  /** `$n::type` for the parameter called name; the first reference to a name gives it its number. */
  ref(name: string, type: string): string;
  /** The values in parameter order. Throws when one is missing: a statement must never bind a gap. */
  values(byName: Readonly<Record<string, unknown>>): unknown[];
}

export function namedParameters(): NamedParameters {
  const names: string[] = [];
  return {
    ref(name, type) {
      if (!names.includes(name)) names.push(name);
      return `$${names.indexOf(name) + 1}::${type}`;
    },
    values(byName) {
      return names.map((name) => {
        if (!(name in byName)) throw new Error(`no value for the statement parameter ${name}`);
        return byName[name];
      });
    },
  };
}
