import * as OpenApiValidator from 'express-openapi-validator';
import type { RequestHandler } from 'express';
import { openApiDocument } from './openapi-document.js';

export { SPEC_PATH } from './openapi-document.js';

type ApiSpec = Parameters<typeof OpenApiValidator.middleware>[0]['apiSpec'];

/**
 * openapi.yaml as the validator reads it: every query parameter marked `allowReserved`. The
 * validator refuses a query value holding a reserved character as sent (`restId=crm+42`: "must be url
 * encoded"), but `+` for a space and unencoded `:/?@!$'()*,;` are standard query encoding (what
 * URLSearchParams, curl and this service's own `Link` send), and the query parser decodes them. The
 * published document keeps the default (`allowReserved: false`), so clients still percent-encode `&`,
 * `#` and a literal `+`; the service accepts both forms.
 */
function validatorDocument(): ApiSpec {
  const document = openApiDocument();
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    const record = node as Record<string, unknown>;
    if (record.in === 'query' && typeof record.name === 'string') record.allowReserved = true;
    Object.values(record).forEach(visit);
  };
  visit(document);
  return document as ApiSpec;
}

/** Validates every request (and, when asked, every response) against openapi.yaml. */
export function openApiValidator({ validateResponses }: { validateResponses: boolean }): RequestHandler[] {
  return OpenApiValidator.middleware({
    apiSpec: validatorDocument(),
    // Query and path parameters are coerced from text; bodies never are (1 is not "1", null is not "").
    validateRequests: { allowUnknownQueryParameters: false },
    validateResponses: validateResponses ? { removeAdditional: false } : false,
    // Keys are checked by requireApiKey, which responds 400 as openapi.yaml declares (BadKey) (the validator would say 401).
    validateSecurity: false,
    validateFormats: true,
    // The document declares no multipart body: no upload parser in every request's path.
    fileUploader: false,
    ajvFormats: { mode: 'full' },
  }) as RequestHandler[];
}
