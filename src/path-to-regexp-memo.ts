import { createRequire } from 'node:module';

/**
 * express-openapi-validator 5.x finds the operation of every request by compiling each path of the
 * document with path-to-regexp, one after the other, on every request (lookupRoute in
 * middlewares/openapi.metadata.js): 8% of the service's CPU on GET /reports/{id} in the benchmark's
 * profile. pathToRegexp is a pure function of (path, options) and its result is only read, so the
 * module's export is replaced, once per process, by a memoised one. path-to-regexp's own match() and
 * Express's router call the function internally and are not affected.
 */
interface PathToRegexpModule {
  pathToRegexp: (path: string, options?: Record<string, unknown>) => unknown;
}

const pathToRegexpModule = createRequire(import.meta.url)('path-to-regexp') as PathToRegexpModule & { memoised?: true };
if (!pathToRegexpModule.memoised) {
  const compile = pathToRegexpModule.pathToRegexp;
  // Per path, the option sets seen with it (the validator passes a fresh object with the same few
  // flags every time): compared key by key, which costs less than serialising them into a key.
  const compiled = new Map<string, { options: Record<string, unknown>; result: unknown }[]>();
  const sameOptions = (a: Record<string, unknown>, b: Record<string, unknown>) => {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
  };
  pathToRegexpModule.pathToRegexp = (path, options = {}) => {
    // Only string paths with flat options (the validator's) are cached.
    if (typeof path !== 'string' || Object.values(options).some((v) => typeof v === 'object' && v !== null)) {
      return compile(path, options);
    }
    let seen = compiled.get(path);
    if (!seen) compiled.set(path, (seen = []));
    const hit = seen.find((entry) => sameOptions(entry.options, options));
    if (hit) return hit.result;
    const result = compile(path, options);
    seen.push({ options: { ...options }, result });
    return result;
  };
  pathToRegexpModule.memoised = true;
}
