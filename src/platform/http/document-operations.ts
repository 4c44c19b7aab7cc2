import { openApiDocument } from './openapi-document.js';

/** One operation of openapi.yaml, with a path its parameters fill and its JSON body's example and schema. */
export interface Operation {
  method: string;
  path: string;
  body?: unknown;
  /** The component schema its JSON body refers to (`UserInput`, …), if it refers to one. */
  bodySchema?: string;
}

type Node = Record<string, unknown>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** A path parameter's value when the document gives no example: the ids are uuids. */
const SOME_ID = '00000000-0000-4000-8000-000000000000';

const resolve = (document: Node, ref: string): Node =>
  ref
    .slice(2)
    .split('/')
    .reduce<Node>((node, name) => node[name] as Node, document);

/** The JSON media of an operation's request body, following a $ref. */
function jsonMedia(document: Node, operation: Node): Node | undefined {
  let body = operation.requestBody as Node | undefined;
  if (typeof body?.$ref === 'string') body = resolve(document, body.$ref);
  return (body?.content as Node | undefined)?.['application/json'] as Node | undefined;
}

/** The first example of a request body (`example`, or the first of `examples`), following $refs. */
function bodyExample(document: Node, media: Node | undefined): unknown {
  if (!media) return undefined;
  if (media.example !== undefined) return media.example;
  const first = Object.values((media.examples as Node | undefined) ?? {})[0] as Node | undefined;
  return typeof first?.$ref === 'string' ? resolve(document, first.$ref).value : first?.value;
}

let listed: readonly Readonly<Operation>[] | undefined;

/**
 * Every operation of the document, with a path its parameters fill and an example body: listed once per
 * process (the document does not change), as each app reads it (body-validator.ts). Callers copy a body
 * before changing it.
 */
export function operations(): readonly Readonly<Operation>[] {
  return (listed ??= listOperations());
}

function listOperations(): Operation[] {
  const document = openApiDocument<Node>();
  return Object.entries(document.paths as Record<string, Node>).flatMap(([template, item]) =>
    METHODS.filter((method) => item[method]).map((method) => {
      const media = jsonMedia(document, item[method] as Node);
      const ref = (media?.schema as Node | undefined)?.$ref;
      return {
        method: method.toUpperCase(),
        path: template.replace(/\{[^}]+\}/g, SOME_ID),
        body: bodyExample(document, media),
        bodySchema: typeof ref === 'string' ? ref.replace('#/components/schemas/', '') : undefined,
      };
    }),
  );
}
