// A server with its own key cache that counts its key queries, for the key cache's tests.

import { expect } from 'chai';
import type { Express } from 'express';
import type { Pool } from '../../src/db/pool.js';
import { ApiKeyCache } from '../../src/integrations/keys/api-key-cache.js';
import { api, countingPool, databaseUrl, newApp } from './harness.js';

export interface CachingServer {
  app: Express;
  pool: Pool;
  cache: ApiKeyCache;
  queries: () => number;
  close: () => Promise<void>;
}

/**
 * A second server process (its own app and pool) whose key cache counts the key queries it sends;
 * its change feed connects to `feedUrl` (by default the database, so it listens).
 */
export async function cachingServer(feedUrl = databaseUrl()): Promise<CachingServer> {
  const { db, queries } = countingPool();
  const cache = new ApiKeyCache({ db, connectionString: feedUrl });
  if (feedUrl === databaseUrl()) expect(await cache.ready(), 'the key cache listens').to.equal(true);
  const server = newApp({ apiKeys: cache });
  const close = async () => {
    await cache.close();
    await server.pool.end();
  };
  return { ...server, cache, queries, close };
}

/**
 * Uses the key until the cache holds it. A key's first use writes lastUsedAt, and that change of the
 * key row is notified and drops the entry, so the key is read once more before it stays cached.
 */
export async function useUntilCached(server: CachingServer, key: string): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const before = server.queries();
    await api(server.app).get('/auth').set('X-API-KEY', key).expect(200);
    if (server.queries() === before) return;
  }
  throw new Error('the key was never served from the cache');
}
