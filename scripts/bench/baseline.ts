// The benchmark's baseline: a bare Express 5 app returning a constant report (BASELINE_BODY, JSON) on
// PORT, so the service's figures read as a ratio of what the same machine can do at all.

import express from 'express';

const body: unknown = JSON.parse(process.env.BASELINE_BODY ?? '{}');
const app = express();
app.disable('x-powered-by');
app.get('/report', (_req, res) => {
  res.json(body);
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
