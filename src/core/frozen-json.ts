// Bodies serialised once: the report cache keeps each report and page frozen with its JSON, so a response
// sends those bytes instead of serialising again (platform/http/json-once.ts is the sending side).

const serialized = new WeakMap<object, Buffer>();

/**
 * Freezes value and everything in it, and keeps its JSON, encoded once, for every answer that sends it:
 * sending text would encode it anew for each answer (a maximal page is a megabyte a time, allocated
 * where only a full garbage collection frees it).
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
