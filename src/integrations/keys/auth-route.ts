import { Router, type Response } from 'express';
import type { Ok } from '../../api-types.js';

export function authRouter(): Router {
  const router = Router();
  router.get('/auth', (_req, res: Response<Ok>) => {
    res.json({ result: 'ok' });
  });
  return router;
}
