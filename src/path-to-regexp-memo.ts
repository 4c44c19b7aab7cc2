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
  const compiled = new Map<string, unknown>();
  pathToRegexpModule.pathToRegexp = (path, options = {}) => {
    // Only string paths (the validator's) are cached; the few option flags make the rest of the key.
    if (typeof path !== 'string') return compile(path, options);
    const key = `${path}\u0000${JSON.stringify(options)}`;
    let result = compiled.get(key);
    if (result === undefined) {
      result = compile(path, options);
      compiled.set(key, result);
    }
    return result;
  };
  pathToRegexpModule.memoised = true;
}
