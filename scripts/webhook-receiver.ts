// A local HTTPS webhook receiver to try publishing, and an example of verifying the signature.
//   npm run webhook-receiver -- init                    writes a self-signed certificate (.data/webhook-receiver/)
//   WEBHOOK_SECRET=whsec_... npm run webhook-receiver   verifies and prints each request
// WEBHOOK_SECRET may list several secrets, comma-separated, for a rotation; RECEIVER_PORT sets the port.

import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { localhostCertificate } from './localhost-certificate.js';

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../.data/webhook-receiver');
const CERT = path.join(DIR, 'cert.pem');
const KEY = path.join(DIR, 'key.pem');
const PORT = Number(process.env.RECEIVER_PORT || 4443);

async function ensureCertificate(): Promise<void> {
  if (existsSync(CERT) && existsSync(KEY)) return;
  await mkdir(DIR, { recursive: true });
  const { key, cert } = await localhostCertificate();
  await writeFile(KEY, key, { mode: 0o600 });
  await writeFile(CERT, cert);
}

async function main(): Promise<void> {
  await ensureCertificate();
  const secrets = (process.env.WEBHOOK_SECRET ?? '')
    .split(',')
    .map((secret) => secret.trim())
    .filter((secret) => secret !== '');
  if (process.argv[2] === 'init' || secrets.length === 0) {
    console.log(
      [
        `Certificate: ${path.relative(process.cwd(), CERT)}`,
        'Start the service trusting it and allowing this loopback receiver:',
        `  NODE_EXTRA_CA_CERTS=${path.relative(process.cwd(), CERT)} WEBHOOK_ALLOWED_CIDRS=127.0.0.1/32 npm start`,
        `Set the webhook address https://127.0.0.1:${PORT}/webhook (npm run admin -- set-webhook ...), then:`,
        '  WEBHOOK_SECRET=<the whsec_ secret it printed> npm run webhook-receiver',
        'While rotating a secret, give both: WEBHOOK_SECRET=<new>,<old>',
      ].join('\n'),
    );
    return;
  }
  // A bad secret (not base64) is refused here, at start, rather than on the first request.
  const webhooks = secrets.map((secret) => new Webhook(secret));
  const seen = new Set<string>();
  const server = createServer({ key: await readFile(KEY), cert: await readFile(CERT) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      // Verify the raw body exactly as received, before parsing it.
      const body = Buffer.concat(chunks).toString('utf8');
      const verified = verifyWithAny(webhooks, body, req.headers as Record<string, string>);
      if ('why' in verified) {
        console.log(`✘ refused a request whose signature does not verify: ${verified.why}`);
        res.writeHead(400, { 'content-type': 'text/plain' }).end('signature does not verify');
        return;
      }
      const { payload, index } = verified;
      const id = String(req.headers['webhook-id']);
      const repeat = seen.has(id) ? ' (a retry of a message already received: de-duplicate on webhook-id)' : '';
      seen.add(id);
      const kind = req.headers['webhook-test'] === 'true' ? 'test delivery, sample ' : '';
      const which = secrets.length > 1 ? ` with secret ${index + 1} of ${secrets.length} in WEBHOOK_SECRET` : '';
      const { report, what } = told(String(req.headers['webhook-event-type']), payload);
      console.log(`✔ verified ${id}${which}${repeat}: ${kind}report ${report.id} ${what}`);
      console.log(JSON.stringify(report, null, 2));
      res.writeHead(204).end();
    });
  });
  server.listen(PORT, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    console.log(`Receiving webhooks on https://127.0.0.1:${port}/webhook (Ctrl-C stops)`);
  });
}

interface Report {
  id: string;
  publishedUrl: string;
}

type Verified = { payload: unknown; index: number } | { why: string };

/** What a verified request tells, by its type: the report, and what happened to it. */
function told(type: string, payload: unknown): { report: Report; what: string } {
  if (type === 'report.published') {
    const report = payload as Report;
    return { report, what: `published at ${report.publishedUrl}` };
  }
  const { report } = payload as { report: Report };
  return { report, what: type === 'report.started' ? 'started' : `(${type})` };
}

/** The first secret whose signature is among the request's (one per secret in force at the sender). */
function verifyWithAny(webhooks: Webhook[], body: string, headers: Record<string, string>): Verified {
  let why = 'no secret given';
  for (const [index, webhook] of webhooks.entries()) {
    try {
      return { payload: webhook.verify(body, headers), index };
    } catch (err) {
      why = err instanceof WebhookVerificationError ? err.message : String(err);
    }
  }
  return { why };
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
