import type { FieldWording } from '../../core/error-wording-types.js';
import { PAGE_LIMIT_WORDING } from '../../core/page-limit.js';
import { quoted } from '../../core/quoted.js';

/**
 * Validator errors as one sentence naming the field, as openapi.yaml's 400 examples read: a pure
 * translation (no request, no I/O), unit-tested on its own.
 */

/** One schema error as express-openapi-validator reports it. */
export interface ValidatorItem {
  path?: string;
  message?: string;
  errorCode?: string;
}

/** The one field of every list (core/page-limit.ts), worded the same everywhere. */
const LIMIT_WORDING: FieldWording = {
  limit: { type: PAGE_LIMIT_WORDING, minimum: PAGE_LIMIT_WORDING, maximum: PAGE_LIMIT_WORDING },
};

/** "/body/clientEmails/1" → { name: "clientEmails", label: "clientEmails[1]" } */
function fieldOf(path: string): { name: string; label: string } {
  const parts = path
    .replace(/^\/(body|query|params|headers|path)\/?/, '')
    .split('/')
    .filter(Boolean);
  const name = parts[0] ?? 'body';
  // An unknown field's name is the caller's, of any length.
  const label = quoted(parts.slice(1).reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : `${acc}.${p}`), name));
  return { name, label };
}

/** Turns express-openapi-validator's list of schema errors into one sentence naming the field. */
export function describeValidationErrors(items: ValidatorItem[], wording: FieldWording = {}): string {
  // Schema alternatives (string or array) report an error per branch: prefer the most telling one.
  const keywordOf = (i: ValidatorItem) => (i.errorCode?.split('.')[0] ?? '').replace(/^x-eov-/, '');
  const rank = (i: ValidatorItem) => {
    const kw = keywordOf(i);
    return (
      [
        'required',
        'additionalProperties',
        'format',
        // Before pattern: a failed `contains` also reports its subschema's failure on each entry.
        'contains',
        'pattern',
        'maxLength',
        'minLength',
        'maxItems',
        'minimum',
        'maximum',
        'const',
        'enum',
        'type',
        'oneOf',
        'anyOf',
      ].indexOf(kw) >>> 0
    );
  };
  const first = [...items].sort((a, b) => rank(a) - rank(b))[0];
  if (!first) return 'invalid request';
  const keyword = keywordOf(first);
  const path = first.path ?? '';
  const { name, label } = fieldOf(path);
  const message = first.message ?? 'is invalid';
  if (keyword === 'required') return `${name} is required`;
  if (keyword === 'additionalProperties') return `unknown field: ${label}`;
  // A property whose schema is `false` is not accepted by that operation (restId on application reports).
  if (keyword === 'false schema') return `unknown field: ${label}`;
  if (/^Unknown query parameter/.test(message))
    return `unknown query parameter: ${quoted(message.match(/'(.*)'/)?.[1] ?? '')}`;
  if (/^Empty value found for query parameter/.test(message))
    return `${quoted(message.match(/'(.*)'/)?.[1] ?? 'parameter')} must not be empty`;
  const special = (wording[name] ?? LIMIT_WORDING[name])?.[keyword];
  if (special) return `${label} ${special}`;
  const anyOfType = items.some((i) => i.path === path && i.errorCode?.startsWith('oneOf'));
  if (keyword === 'type' && anyOfType) return `${label} must be a string or an array of strings`;
  if (keyword === 'type' && path === '/body') return 'the body must be a JSON object';
  return `${label} ${message}`;
}
