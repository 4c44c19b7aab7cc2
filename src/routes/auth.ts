import { Router, type Response } from 'express';
import type { components } from '../../generated/api.js';

export function authRouter(): Router {
  const router = Router();
  router.get('/auth', (_req, res: Response<components['schemas']['Ok']>) => {
    res.json({ result: 'ok' });
  });
  return router;
}
