// Bodies serialised once: the report cache keeps each report and page frozen with its JSON, so a response
// sends those bytes instead of serialising again (platform/http/json-once.ts is the sending side).

const serialized = new WeakMap<object, Buffer>();

/**
 * Freezes value and everything in it, and keeps its JSON, encoded once, for every response that sends
 * it: text would be encoded anew for each response, in buffers only a full garbage collection frees.
 */
export function freezeWithJson<T extends object>(value: T, json: Buffer): T {
  serialized.set(deepFreeze(value), json);
  return value;
}

/** The JSON kept for a body frozen by freezeWithJson, or undefined for any other value. */
export function keptJson(body: unknown): Buffer | undefined {
  return typeof body === 'object' && body !== null ? serialized.get(body) : undefined;
}

function deepFreeze(value: object): object {
  for (const child of Object.values(value)) {
    if (typeof child === 'object' && child !== null && !Object.isFrozen(child)) deepFreeze(child);
  }
  return Object.freeze(value);
}
