import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';
import { SPEC_PATH } from '../../src/platform/http/openapi-validator.js';

/**
 * An independent check of answers and webhooks against an OpenAPI document: the status must be
 * declared for the operation, and a body must be of a declared media type and, as JSON, match the
 * declared schema. It does not share code with the service's own validator. One checker serves both
 * openapi.yaml (every response the tests receive) and the generated partner document.
 */
export interface ContractDocument {
  paths: Record<string, Record<string, unknown>>;
  webhooks?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

/** A header the document describes: a response's header object (named by its key) or a header parameter. */
interface HeaderRule {
  name: string;
  required?: boolean;
  schema: { type?: string };
}

interface Operation {
  parameters?: (HeaderRule & { in: string })[];
  responses: Record<string, unknown>;
}

/** Headers whose presence the contract governs: when the service sends one, the response must declare it. */
const GOVERNED_HEADERS = ['cache-control', 'retry-after', 'ratelimit', 'ratelimit-policy', 'intake-mode'];

export interface CheckedResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  text?: string;
}

export interface Contract {
  /** Problems of a value against the JSON schema at a pointer of the document ("#/components/schemas/Report"); empty when it conforms. */
  schemaProblems(ref: string, value: unknown): string[];
  /** Problems of an answer to `method url`; empty when it conforms. A path the document does not have must answer 404 or 405. */
  responseProblems(method: string, url: string, res: CheckedResponse): string[];
  /** Problems of a request the service sent to the named webhook (JSON content type, declared headers, body); empty when it conforms. */
  webhookProblems(name: string, headers: Record<string, string | string[] | undefined>, rawBody: string): string[];
  /** The webhook whose `webhook-event-type` header is declared with this value (each webhook declares its own). */
  webhookOfType(type: string): string | undefined;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

export function contractOf(document: ContractDocument): Contract {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  ajv.addSchema(document, 'doc');
  const validator = (ref: string) => ajv.getSchema(`doc${ref}`) ?? ajv.compile({ $ref: `doc${ref}` });
  const templates = Object.keys(document.paths).map((template) => ({
    template,
    regex: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));

  const resolve = (node: unknown) => {
    let current = node as
      { $ref?: string; content?: Record<string, unknown>; headers?: Record<string, unknown> } | undefined;
    while (current && typeof current.$ref === 'string') {
      current = current.$ref
        .replace(/^#\//, '')
        .split('/')
        .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
        .reduce<unknown>((acc, key) => (acc as Record<string, unknown>)[key], document) as typeof current;
    }
    return current;
  };

  /** Problems of a body against the JSON schema at a JSON pointer of the document. */
  const schemaProblems = (ref: string, body: unknown): string[] => {
    const validate = validator(ref);
    return validate(body) ? [] : [`body does not match the contract: ${ajv.errorsText(validate.errors)}`];
  };

  /** An operation's header parameters, those it shares by $ref included. */
  const headerParameters = (operation: Operation): HeaderRule[] =>
    (operation.parameters ?? [])
      .map((p) => resolve(p) as unknown as HeaderRule & { in: string })
      .filter((p) => p.in === 'header');

  /** Every required header present, every header sent valid against its schema. */
  const headerProblems = (rules: HeaderRule[], headers: Record<string, string | string[] | undefined>) =>
    rules.flatMap((rule): string[] => {
      const value = headers[rule.name.toLowerCase()];
      if (value === undefined) return rule.required ? [`required header ${rule.name} is missing`] : [];
      // Header values are text; a header declared as an integer must be one written in digits.
      const typed =
        rule.schema.type === 'integer' && typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
      const validate = ajv.compile(rule.schema);
      return validate(typed) ? [] : [`header ${rule.name} "${value}" is invalid: ${ajv.errorsText(validate.errors)}`];
    });

  return {
    schemaProblems,

    responseProblems(method, url, res) {
      const path = url.split('?')[0]!;
      const match = templates.find((t) => t.regex.test(path));
      const operation = match && (document.paths[match.template]![method.toLowerCase()] as Operation | undefined);
      if (!operation) {
        const expected = match ? [405] : [404, 405];
        if (!expected.includes(res.status))
          return [`${match ? 'method' : 'path'} not in the contract, expected ${expected.join(' or ')}`];
        return isErrorBody(res.body) ? [] : [`body is not {"error": string}`];
      }
      const declared = operation.responses[String(res.status)];
      if (!declared) return [`status ${res.status} is not declared for this operation`];
      const response = resolve(declared);
      const rules = Object.entries(response?.headers ?? {}).map(([name, header]) => ({
        ...(resolve(header) as Omit<HeaderRule, 'name'>),
        name: name.toLowerCase(),
      }));
      const problems = [
        ...GOVERNED_HEADERS.filter(
          (name) => res.headers[name] !== undefined && !rules.some((r) => r.name === name),
        ).map((name) => `header ${name} is sent but not declared for this response`),
        ...headerProblems(rules, res.headers),
      ];
      const content = response?.content;
      if (!content) return problems;
      const type = (res.headers['content-type'] ?? '').split(';')[0]!.trim();
      if (!content[type]) return [...problems, `content-type ${res.headers['content-type']} is not declared`];
      if (type !== 'application/json') return problems;
      const declaredRef = (declared as { $ref?: string }).$ref;
      const at = declaredRef
        ? declaredRef.replace(/^#\//, '')
        : pointer('paths', match.template, method.toLowerCase(), 'responses', String(res.status));
      return [...problems, ...schemaProblems(`#/${at}/content/application~1json/schema`, res.body)];
    },

    webhookProblems(name, headers, rawBody) {
      const operation = document.webhooks?.[name]?.post as Operation | undefined;
      if (!operation) return [`webhook ${name} is not in the contract`];
      const problems = String(headers['content-type'] ?? '').startsWith('application/json')
        ? []
        : [`content-type ${headers['content-type']} is not application/json`];
      problems.push(...headerProblems(headerParameters(operation), headers));
      const body = pointer('webhooks', name, 'post', 'requestBody', 'content', 'application/json', 'schema');
      return [...problems, ...schemaProblems(`#/${body}`, JSON.parse(rawBody))];
    },

    webhookOfType(type) {
      return Object.entries(document.webhooks ?? {}).find(([, item]) =>
        headerParameters(item.post as Operation).some(
          (p) => p.name === 'webhook-event-type' && (p.schema as { const?: string }).const === type,
        ),
      )?.[0];
    },
  };
}

function isErrorBody(body: unknown): boolean {
  return (
    typeof body === 'object' &&
    body !== null &&
    Object.keys(body).length === 1 &&
    typeof (body as { error?: unknown }).error === 'string'
  );
}

/** openapi.yaml, the whole contract (application API and webhooks included). */
export const spec = parse(readFileSync(SPEC_PATH, 'utf8')) as ContractDocument;
export const contract = contractOf(spec);

/** Throws when an answer the tests received breaks openapi.yaml. */
export function assertMatchesContract(method: string, url: string, res: CheckedResponse): void {
  const problems = contract.responseProblems(method, url, res);
  if (problems.length > 0)
    throw new Error(`${method.toUpperCase()} ${url} → ${res.status}: ${problems.join('; ')}\n${res.text ?? ''}`);
}

/**
 * Throws when a webhook request the service sent breaks openapi.yaml: the webhook is the one its
 * `webhook-event-type` header names, as a receiver tells the types apart.
 */
export function assertWebhookMatchesContract(
  headers: Record<string, string | string[] | undefined>,
  rawBody: string,
): void {
  const type = String(headers['webhook-event-type']);
  const name = contract.webhookOfType(type);
  const problems = name
    ? contract.webhookProblems(name, headers, rawBody)
    : [`webhook-event-type "${type}" names no webhook of the contract`];
  if (problems.length > 0) throw new Error(`webhook: ${problems.join('; ')}\n${rawBody}`);
}
