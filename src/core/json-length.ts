/**
 * Whether JSON.stringify may write text with escapes: a quote, a backslash, a control character, a lone
 * surrogate (\p{Cc} also takes U+007F-U+009F, which it writes as they are: such text is measured by
 * its JSON, as exactly, only more slowly).
 */
const escapes = (text: string) => /["\\\p{Cc}]/u.test(text) || !text.isWellFormed();

/**
 * The length of JSON.stringify(value), in characters, without building it: for a maximal report, a
 * megabyte of text built only to be measured is a megabyte more for the garbage collector, on the
 * event loop every company shares. For the values JSON.parse makes and rows built from them: strings,
 * finite numbers, booleans, null, arrays and plain objects (an undefined property is left out and an
 * undefined array item counted as null, as JSON.stringify does). Only a string with a character to
 * escape is serialised, to be measured.
 */
export function jsonLength(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return escapes(value) ? JSON.stringify(value).length : value.length + 2;
    case 'number':
    case 'boolean':
      return JSON.stringify(value).length;
    case 'object': {
      if (value === null) return 4;
      // The opening bracket and each item with the comma after it; the last comma is the closing bracket.
      let length = 1;
      if (Array.isArray(value)) {
        for (const item of value) length += jsonLength(item ?? null) + 1;
      } else {
        for (const [key, item] of Object.entries(value)) {
          if (item !== undefined) length += jsonLength(key) + 1 + jsonLength(item) + 1;
        }
      }
      return Math.max(length, 2);
    }
    default:
      return 4;
  }
}
