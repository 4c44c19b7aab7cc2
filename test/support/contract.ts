import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';
import { SPEC_PATH } from '../../src/openapi.js';

/**
 * An independent check of every response the tests receive against openapi.yaml: the status must be
 * declared for the operation, and a JSON body must match the declared schema. It does not share
 * code with the service's own validator.
 */
type Spec = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
export const spec = parse(readFileSync(SPEC_PATH, 'utf8')) as Spec & Record<string, unknown>;

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
ajv.addSchema(spec, 'spec');

const templates = Object.keys(spec.paths).map((template) => ({
  template,
  regex: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

function resolve(node: unknown): unknown {
  let current = node as { $ref?: string } | undefined;
  while (current && typeof current.$ref === 'string') {
    current = current.$ref
      .replace(/^#\//, '')
      .split('/')
      .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<unknown>((acc, key) => (acc as Record<string, unknown>)[key], spec) as { $ref?: string };
  }
  return current;
}

export interface CheckedResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  text?: string;
}

/** Throws when the response breaks the contract. A path the document does not have must answer 404 or 405. */
export function assertMatchesContract(method: string, url: string, res: CheckedResponse): void {
  const path = url.split('?')[0]!;
  const match = templates.find((t) => t.regex.test(path));
  const where = `${method.toUpperCase()} ${url} → ${res.status}`;
  if (!match) {
    if (res.status !== 404 && res.status !== 405) throw new Error(`${where}: path not in the contract`);
    if (!isErrorBody(res.body)) throw new Error(`${where}: body is not {"error": string}: ${res.text}`);
    return;
  }
  const operation = spec.paths[match.template]![method.toLowerCase()];
  if (!operation) {
    if (res.status !== 405) throw new Error(`${where}: method not in the contract, expected 405`);
    if (!isErrorBody(res.body)) throw new Error(`${where}: body is not {"error": string}: ${res.text}`);
    return;
  }
  const declared = operation.responses[String(res.status)];
  if (!declared) throw new Error(`${where}: status ${res.status} is not declared for this operation`);
  assertHeadersMatch(where, resolve(declared) as { headers?: Record<string, unknown> }, res.headers);
  const content = (resolve(declared) as { content?: Record<string, unknown> }).content;
  if (!content) return;
  if (!content['application/json']) {
    // A non-JSON response (the metrics' text/plain): its media type must be the declared one.
    const type = (res.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (!Object.keys(content).includes(type))
      throw new Error(`${where}: content-type ${res.headers['content-type']} is not declared`);
    return;
  }
  if (!(res.headers['content-type'] ?? '').startsWith('application/json')) {
    throw new Error(`${where}: content-type ${res.headers['content-type']} is not application/json`);
  }
  const ref = `spec#/${pointer('paths', match.template, method.toLowerCase(), 'responses', String(res.status))}`;
  const declaredRef = (declared as { $ref?: string }).$ref;
  const schemaRef = declaredRef
    ? `spec${declaredRef}/content/application~1json/schema`
    : `${ref}/content/application~1json/schema`;
  const validate = ajv.getSchema(schemaRef) ?? ajv.compile({ $ref: schemaRef });
  if (!validate(res.body)) {
    throw new Error(`${where}: body does not match the contract: ${ajv.errorsText(validate.errors)}\n${res.text}`);
  }
}

/** Headers whose presence the contract governs: when the service sends one, the response must declare it. */
const GOVERNED_HEADERS = ['cache-control', 'retry-after'];

interface HeaderObject {
  required?: boolean;
  schema: { type?: string };
}

/** Every required header of the declared response is present and valid; a governed header sent is declared. */
function assertHeadersMatch(
  where: string,
  declared: { headers?: Record<string, unknown> },
  headers: Record<string, string>,
): void {
  const declaredHeaders = new Map(
    Object.entries(declared.headers ?? {}).map(([name, header]) => [
      name.toLowerCase(),
      resolve(header) as HeaderObject,
    ]),
  );
  for (const name of GOVERNED_HEADERS) {
    if (headers[name] !== undefined && !declaredHeaders.has(name))
      throw new Error(`${where}: header ${name} is sent but not declared for this response`);
  }
  for (const [name, header] of declaredHeaders) {
    const value = headers[name];
    if (value === undefined) {
      if (header.required) throw new Error(`${where}: required header ${name} is missing`);
      continue;
    }
    // Header values are text; a header declared as an integer must be one written in digits.
    const typed = header.schema.type === 'integer' && /^\d+$/.test(value) ? Number(value) : value;
    const validate = ajv.compile(header.schema);
    if (!validate(typed))
      throw new Error(`${where}: header ${name} "${value}" is invalid: ${ajv.errorsText(validate.errors)}`);
  }
}

function isErrorBody(body: unknown): boolean {
  return (
    typeof body === 'object' &&
    body !== null &&
    Object.keys(body).length === 1 &&
    typeof (body as { error?: unknown }).error === 'string'
  );
}

interface HeaderParameter {
  name: string;
  in: string;
  required?: boolean;
  schema: unknown;
}

/**
 * Throws when a webhook request the service sent breaks the `webhooks.reportPublished` section:
 * JSON content type, every declared header present and valid, the body valid against its schema.
 */
export function assertWebhookMatchesContract(
  headers: Record<string, string | string[] | undefined>,
  rawBody: string,
): void {
  const operation = (spec.webhooks as Record<string, { post: { parameters: HeaderParameter[] } }>).reportPublished!
    .post;
  if (!String(headers['content-type'] ?? '').startsWith('application/json')) {
    throw new Error(`webhook: content-type ${headers['content-type']} is not application/json`);
  }
  for (const parameter of operation.parameters.filter((p) => p.in === 'header')) {
    const value = headers[parameter.name.toLowerCase()];
    if (value === undefined) {
      if (parameter.required) throw new Error(`webhook: header ${parameter.name} is missing`);
      continue;
    }
    const validate = ajv.compile(parameter.schema as object);
    if (!validate(value))
      throw new Error(`webhook: header ${parameter.name} "${value}" is invalid: ${ajv.errorsText(validate.errors)}`);
  }
  const schemaRef = `spec#/${pointer('webhooks', 'reportPublished', 'post', 'requestBody', 'content', 'application/json', 'schema')}`;
  const validate = ajv.getSchema(schemaRef) ?? ajv.compile({ $ref: schemaRef });
  if (!validate(JSON.parse(rawBody))) {
    throw new Error(`webhook: body does not match the contract: ${ajv.errorsText(validate.errors)}\n${rawBody}`);
  }
}
