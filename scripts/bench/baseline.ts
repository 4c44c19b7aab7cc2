/**
 * The benchmark's baseline: a bare Express 5 app answering a constant report of the same shape the
 * service returns. Whatever the service reaches is read as a ratio of this, on the same machine.
 * The report is passed in BASELINE_BODY (JSON); the port in PORT.
 */
import express from 'express';

const body: unknown = JSON.parse(process.env.BASELINE_BODY ?? '{}');
const app = express();
app.disable('x-powered-by');
app.get('/report', (_req, res) => {
  res.json(body);
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
