import { Router, type Response } from 'express';
import type { OperationalStatus } from '../../api-types.js';
import type { Pool } from '../../db/pool.js';
import { pendingMigrations } from '../../db/migrate.js';
import { refuse } from '../../core/errors.js';
import { metricsSource } from './metrics.js';
import { requireAppToken } from '../http/app-token.js';

/**
 * Operator endpoints: liveness and readiness probes (no key) and Prometheus metrics (application token).
 * `starting`: why the process is not ready yet although it listens (undefined once it is).
 */
export function operationsRouter(db: Pool, appToken: string, starting: () => string | undefined): Router {
  const router = Router();
  const metrics = metricsSource(db);

  // Alive: the process responds. Deliberately does not touch the database, so a database outage
  // makes instances unready, not restarted.
  router.get('/healthz', (_req, res: Response<OperationalStatus>) => {
    res.json({ status: 'ok' });
  });

  router.get('/readyz', async (_req, res: Response<OperationalStatus>) => {
    const why = starting();
    if (why) throw refuse.unavailable(why);
    const pending = await pendingMigrations(db);
    if (pending.length > 0) throw refuse.unavailable(`database migrations not applied: ${pending.join(', ')}`);
    res.json({ status: 'ready' });
  });

  router.get('/metrics', requireAppToken(appToken), async (_req, res) => {
    let text: string;
    try {
      text = await metrics.text();
    } catch (err) {
      // Only in a cluster: a worker did not reply to the primary in time (one just died or is starting).
      throw refuse.unavailable(`metrics unavailable: ${(err as Error).message}`);
    }
    res.type(metrics.contentType).send(text);
  });

  return router;
}
