import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as OpenApiValidator from 'express-openapi-validator';
import type { RequestHandler } from 'express';

/** The full contract (partner and internal parts): the single source of truth. */
export const SPEC_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../openapi.yaml');

/** Validates every request (and, when asked, every response) against openapi.yaml. */
export function openApiValidator({ validateResponses }: { validateResponses: boolean }): RequestHandler[] {
  return OpenApiValidator.middleware({
    apiSpec: SPEC_PATH,
    // Query and path parameters are coerced from text; bodies never are (1 is not "1", null is not "").
    validateRequests: { allowUnknownQueryParameters: false },
    validateResponses: validateResponses ? { removeAdditional: false } : false,
    // Keys are checked by requireApiKey, which answers 400 as the description requires (the validator would say 401).
    validateSecurity: false,
    validateFormats: true,
    ajvFormats: { mode: 'full' },
  }) as RequestHandler[];
}
