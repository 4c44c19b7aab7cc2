// The server-rendered console at /console, built on the components' own functions (see pages.ts).

export { consoleRouter } from './router.js';
export type { ConsoleDeps } from './deps.js';
export { sweepExpiredSessions } from './sessions.js';
