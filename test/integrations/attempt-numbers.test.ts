import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { makeAttempt } from '../../src/integrations/webhooks/deliveries.js';
import type { DeliveryAttempt, Notifier } from '../../src/integrations/webhooks/notifier.js';
import { newCompany, pool, unique } from '../support/harness.js';

// Every attempt of a webhook-id has a number of its own in the delivery log, even when two attempts of
// it start at the same moment (a lease running out under a slow attempt, two processes): the unique
// index refuses a number taken at once, and the attempt counts again.

/** A receiver that answers 204 after `ms`: the attempts overlap. */
const slowNotifier = (ms: number): Notifier => ({
  timeoutMs: 10_000,
  reserve: () => ({ release: () => undefined }),
  deliver: async (): Promise<DeliveryAttempt> => {
    await sleep(ms);
    return { attemptedAt: new Date(), durationMs: ms, httpStatus: 204, error: '', responseExcerpt: '' };
  },
});

describe('attempt numbers', () => {
  it('gives each attempt of a webhook-id its own number, attempts started at once included', async () => {
    const { companyId } = await newCompany();
    const webhookId = `msg_${unique('n')}`;
    const plan = {
      message: {
        url: 'https://receiver.example/hook',
        secrets: ['s'],
        webhookId,
        type: 'report.published',
        payload: '{}',
      },
      reportId: null,
    } as const;
    const attempt = () => makeAttempt(pool(), slowNotifier(50), companyId, plan, async () => undefined);
    // Started together, each counts the log before the other's row is committed.
    await Promise.all(Array.from({ length: 4 }, attempt));
    await attempt();
    const { rows } = await pool().query<{ attempt: number }>(
      'SELECT attempt FROM webhook_deliveries WHERE company_id = $1 AND webhook_id = $2 ORDER BY attempt',
      [companyId, webhookId],
    );
    expect(rows.map((r) => r.attempt)).to.deep.equal([1, 2, 3, 4, 5]);
  });
});
