import { expect } from 'chai';
import express from 'express';
import request from 'supertest';
import { LOOP_TURN_BYTES } from '../../src/core/loop-turns.js';
import { jsonBody } from '../../src/platform/http/json-body.js';
import { ReportWriter } from '../../src/reports/index.js';

type Queryable = ConstructorParameters<typeof ReportWriter>[0];

/**
 * A large request's steps give the event loop a turn in between (core/loop-turns.ts): what was queued
 * for the loop's next turn (setImmediate) when a step ended runs before the next step; a small
 * request's steps run on at once.
 */
describe('loop turns between the steps of a large request', () => {
  /** The order of the handler and of a turn queued when the request's body ended, for a body of `bytes`. */
  async function bodyOrder(bytes: number): Promise<string[]> {
    const order: string[] = [];
    const app = express();
    app.use((req, _res, next) => {
      // Registered before the body parser's own listener: queued first, when the last byte is read.
      req.once('end', () => setImmediate(() => order.push('turn')));
      next();
    });
    app.use(jsonBody());
    app.post('/', (req, res) => {
      order.push('handler');
      res.json({ length: (req.body as { text: string }).text.length });
    });
    const text = 'x'.repeat(bytes - '{"text":""}'.length);
    const res = await request(app).post('/').type('json').send(JSON.stringify({ text })).expect(200);
    expect(res.body.length).to.equal(text.length);
    await new Promise((resolve) => setImmediate(resolve));
    return order;
  }

  it('runs the handler of a large body after a turn of the loop, that of a small one at once', async () => {
    expect(await bodyOrder(LOOP_TURN_BYTES)).to.deep.equal(['turn', 'handler']);
    expect(await bodyOrder(LOOP_TURN_BYTES - 1)).to.deep.equal(['handler', 'turn']);
  });

  /** The order of the write's statement and of a turn queued just before the write was submitted. */
  async function writeOrder(notesLength: number): Promise<string[]> {
    const order: string[] = [];
    const db: Queryable = {
      query: (() => {
        order.push('statement');
        return Promise.reject(new Error('no database here'));
      }) as Queryable['query'],
    };
    const writer = new ReportWriter(db, { batchesInFlight: 1 });
    setImmediate(() => order.push('turn'));
    const written = writer
      .createOrUpdate(
        { companyId: '00000000-0000-4000-8000-000000000001' },
        { clientNames: 'Jordan Smith', inspectionDate: '2026-03-14', notes: 'n'.repeat(notesLength) },
      )
      .catch(() => undefined);
    await written;
    await new Promise((resolve) => setImmediate(resolve));
    return order;
  }

  it('sends a large write to the database after a turn of the loop, a small one at once', async () => {
    expect(await writeOrder(LOOP_TURN_BYTES)).to.deep.equal(['turn', 'statement']);
    expect(await writeOrder(100)).to.deep.equal(['statement', 'turn']);
  });
});
