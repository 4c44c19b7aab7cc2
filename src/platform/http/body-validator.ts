import type { Express, Request, RequestHandler, Response } from 'express';
import { operations, type Operation } from './document-operations.js';
import type { ValidatorItem } from './validation-messages.js';

/** A body checked as the API's validator checks the body of an operation that takes a component schema. */
export interface BodyValidator {
  /** The items of the validator's 400 for this body, or undefined when it passes. */
  check(schema: string, body: unknown): Promise<ValidatorItem[] | undefined>;
  /** The document's example body of that operation: a valid body to check one property in. */
  example(schema: string): Record<string, unknown>;
}

/** Runs the handlers on a request made in the process; resolves with the validator's 400 items, if any. */
function run(app: Express, handlers: RequestHandler[], { method, path }: Operation, body: unknown) {
  // The app's own request and response, so that the handlers find the app's settings as for a request received.
  const req = Object.assign(Object.create(app.request) as Request, {
    method,
    url: path,
    originalUrl: path,
    baseUrl: '',
    headers: { 'content-type': 'application/json' },
    params: {},
    // A copy: the validator fills defaults in the body it checks.
    body: structuredClone(body),
  });
  const res = Object.create(app.response) as Response;
  return new Promise<ValidatorItem[] | undefined>((resolve, reject) => {
    const step = (at: number) => (err?: unknown) => {
      const refusal = err as { status?: number; errors?: ValidatorItem[] } | undefined;
      if (refusal?.status === 400 && Array.isArray(refusal.errors)) return resolve(refusal.errors);
      if (err) return reject(err instanceof Error ? err : new Error(String(err)));
      if (at === handlers.length) return resolve(undefined);
      try {
        void handlers[at]!(req, res, step(at + 1));
      } catch (thrown) {
        reject(thrown instanceof Error ? thrown : new Error(String(thrown)));
      }
    };
    step(0)();
  });
}

/**
 * The app's validator handlers (openapi-validator.ts) as the check of a body made in the process: the
 * console's forms, turned into the API's input, are checked by the one validator the API uses, as the
 * body of the first operation of openapi.yaml that takes their schema.
 */
export function bodyValidator(app: Express, handlers: RequestHandler[]): BodyValidator {
  const bySchema = new Map<string, Operation>();
  for (const operation of operations()) {
    if (operation.bodySchema && !bySchema.has(operation.bodySchema)) bySchema.set(operation.bodySchema, operation);
  }
  const operationOf = (schema: string) => {
    const operation = bySchema.get(schema);
    if (!operation) throw new Error(`no operation of openapi.yaml takes a ${schema} body`);
    return operation;
  };
  return {
    check: (schema, body) => run(app, handlers, operationOf(schema), body),
    example: (schema) => ({ ...(operationOf(schema).body as Record<string, unknown>) }),
  };
}
