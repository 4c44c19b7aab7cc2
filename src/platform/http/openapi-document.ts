import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

// openapi.yaml, the whole contract (partner and internal parts), read and parsed once for every module
// that needs it: the validator, the route templates and the list of operations (document-operations.ts).

export const SPEC_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../openapi.yaml');

let parsed: unknown;

/** A copy of the parsed document of its own for each caller: the validator changes the one it is given. */
export function openApiDocument<T = Record<string, unknown>>(): T {
  parsed ??= parse(readFileSync(SPEC_PATH, 'utf8'));
  return structuredClone(parsed) as T;
}
