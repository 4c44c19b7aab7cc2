import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { APP_TOKEN, newCompany } from '../support/harness.js';
import { ROOT, startReceiver, startStage, stop, type Receiver } from '../support/receiver-process.js';

const run = promisify(execFile);

describe('docs/walk-throughs.md: rotating a secret with npm run admin and npm run webhook-receiver', function () {
  this.timeout(120_000);
  let service: Server | undefined;
  let receiver: Receiver | undefined;

  afterEach(async () => {
    if (receiver) await stop(receiver);
    service?.close();
  });

  it('rotates with no failed verification, the receiver naming the secret that verified', async () => {
    // A first start writes the receiver's certificate, which the service then trusts (NODE_EXTRA_CA_CERTS in the walk-through).
    const stage = await startStage();
    ({ receiver, service } = stage);
    const { admin } = stage;
    const port = receiver.port;

    const { companyId } = await newCompany();
    const { secret: old } = await admin('set-webhook', companyId, `https://127.0.0.1:${port}/webhook`);
    await stop(receiver);
    receiver = await startReceiver([old], port);

    // 1. Rotate: the receiver, still on the old secret, keeps verifying.
    const { secret: current, previousSecretExpiresAt } = await admin('rotate-secret', companyId, '--overlap', '3600');
    expect(previousSecretExpiresAt).to.be.a('string');
    expect(await admin('test-webhook', companyId)).to.include({ outcome: 'sent', status: 204 });
    expect(await receiver.next(/^[✔✘]/)).to.match(/^✔ verified msg_\S+: test delivery, sample report /);

    // 2. Deploy both secrets, then 3. only the new one: every delivery verifies all along.
    await stop(receiver);
    receiver = await startReceiver([old, current], port);
    expect(await admin('test-webhook', companyId)).to.include({ status: 204 });
    expect(await receiver.next(/^[✔✘]/)).to.match(/^✔ verified msg_\S+ with secret 1 of 2 in WEBHOOK_SECRET: /);
    await stop(receiver);
    receiver = await startReceiver([current], port);
    expect(await admin('test-webhook', companyId)).to.include({ status: 204 });
    expect(await receiver.next(/^[✔✘]/)).to.match(/^✔ verified /);

    // What the overlap avoids: with overlap 0 a receiver without the newest secret fails at once.
    const { secret: newest } = await admin('rotate-secret', companyId, '--overlap', '0');
    const failure = await admin('test-webhook', companyId).catch((err: { code: number; stderr: string }) => err);
    expect(failure).to.include({
      code: 1,
      stderr: 'Error 502: webhook delivery failed: the receiver answered HTTP 400\n',
    });
    expect(await receiver.next(/^[✔✘]/)).to.match(/^✘ refused a request whose signature does not verify/);
    // Deploying it next to the old one (any order) repairs it: the second secret verifies.
    await stop(receiver);
    receiver = await startReceiver([current, newest], port);
    expect(await admin('test-webhook', companyId)).to.include({ status: 204 });
    expect(await receiver.next(/^[✔✘]/)).to.match(/^✔ verified msg_\S+ with secret 2 of 2 in WEBHOOK_SECRET: /);
  });

  it('admin rotate-secret refuses a bad --overlap, naming it', async () => {
    const env = { ...process.env, API_URL: 'http://127.0.0.1:9', APP_TOKEN };
    const { companyId } = await newCompany();
    const failure = await run(
      process.execPath,
      ['--import', 'tsx', 'scripts/admin.ts', 'rotate-secret', companyId, '--overlap', 'a-day'],
      { cwd: ROOT, env },
    ).catch((err: { code: number; stderr: string }) => err);
    expect(failure).to.include({ code: 1 });
    expect((failure as { stderr: string }).stderr).to.match(/^--overlap needs a whole number of seconds, got "a-day"/);
  });
});
