// The stage of `npm run bench:fairness`: a fresh PostgreSQL, a slow and a fast local HTTPS webhook
// receiver, the production build of the service, and companies B (ordinary), A (many reports) and
// "A max" (reports of the largest size the contract allows).

import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { HttpsReceiver } from '../../test/support/https-receiver.js';
import { localhostCertificate } from '../localhost-certificate.js';
import { buildProduction } from '../production-build.js';
import type { ReportInput } from '../../src/api-types.js';
import { onCleanUp, startBenchDatabase, startServer } from './lifecycle.js';
import { benchReport, seedCompany, type SeededCompany } from './seed.js';

export interface Stage {
  baseUrl: string;
  appToken: string;
  servicePid: number;
  postmaster: number;
  databaseUrl: string;
  /** A: 1,000 ordinary reports (restIds seed-1 … seed-1000), its webhook answering after 8 s. */
  a: SeededCompany;
  /** A's second company: 40 maximal reports, and the 50 inspectors a maximal report names. */
  aMax: SeededCompany & { inspectorEmails: string[] };
  /** B: its report ids, and one report created through the API (so that publishing it notifies). */
  b: SeededCompany & { ids: string[]; publishReportId: string };
  receivers: HttpsReceiver[];
}

type App = { baseUrl: string; appToken: string };

export async function appCall(stage: App, method: string, route: string, body?: unknown) {
  const res = await fetch(`${stage.baseUrl}/internal${route}`, {
    method,
    headers: { authorization: `Bearer ${stage.appToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} /internal${route}: ${res.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : {}) as Record<string, string>;
}

/** A partner create, sent again after its Retry-After when refused 429 (as a partner would); answers the report's id. */
async function createReport(baseUrl: string, key: string, body: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const headers = { 'x-api-key': key, 'content-type': 'application/json' };
    const res = await fetch(`${baseUrl}/reports/new`, { method: 'POST', headers, body });
    const text = await res.text();
    if (res.status === 429 && attempt < 5) await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
    else if (res.status !== 200) throw new Error(`POST /reports/new: ${res.status} ${text.slice(0, 300)}`);
    else return (JSON.parse(text) as { id: string }).id;
  }
}

const wide = (chars: number) => '€'.repeat(chars);
const fifty = <T>(make: (i: number) => T) => Array.from({ length: 50 }, (_, i) => make(i));
const email = (tag: string) => `${tag}.${'x'.repeat(320 - tag.length - 13)}@max.example`;

/**
 * The largest report the contract allows (openapi.yaml, ReportInput), naming these inspectors: every
 * field at its maximum length, every array at its maximum number of entries, free text in a three-byte
 * character (€), within the 1 MiB a request body may have.
 */
export function maximalReportBody(restId: string, inspectorEmails: string[]): string {
  const report: ReportInput = {
    ...{ restId: restId.padEnd(255, '_'), fromRestService: wide(255), inspectionDate: '2026-03-14' },
    ...{ clientNames: fifty(() => wide(320)), clientEmails: fifty((i) => email(`client${i}`)) },
    ...{ clientPhones: fifty(() => wide(50)), address: wide(1_000), yearBuilt: wide(20), squareFeet: wide(20) },
    ...{ notes: wide(100_000), agentName: wide(320), agentEmail: email('agent'), agentPhone: wide(50) },
    inspectorEmails: inspectorEmails.slice(0, 50),
    invoiceItems: Array.from({ length: 200 }, () => `${wide(996)}: $1`),
  };
  const body = JSON.stringify(report);
  if (Buffer.byteLength(body) > 1024 * 1024) throw new Error('the maximal report is over the 1 MiB limit');
  return body;
}

/** A's second company through the application API: 50 inspectors of names and addresses at their maximum, 40 maximal reports. */
async function createMaximalCompany(stage: App): Promise<Stage['aMax']> {
  const company = await appCall(stage, 'POST', '/companies', { name: 'A max' });
  const two = (i: number) => String(i).padStart(2, '0');
  const inspectors = fifty((i) => ({ name: `${two(i)}${wide(318)}`, email: email(`inspector${two(i)}`) }));
  for (const inspector of inspectors) await appCall(stage, 'POST', `/companies/${company.id}/users`, inspector);
  const { key } = await appCall(stage, 'POST', `/companies/${company.id}/api-keys`);
  const inspectorEmails = inspectors.map((i) => i.email);
  for (let i = 1; i <= 40; i++) await createReport(stage.baseUrl, key!, maximalReportBody(`max-${i}`, inspectorEmails));
  return { companyId: company.id!, key: key!, inspectorEmail: inspectorEmails[0]!, inspectorEmails };
}

/** The service's production build, trusting the receivers' certificate (ca) and allowed to reach them on 127.0.0.1. */
export async function startServiceTrusting(database: { url: string; dir: string }, ca: string, env = {}) {
  const caFile = path.join(database.dir, 'receivers-ca.pem');
  await writeFile(caFile, ca);
  const trusting = { WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32', NODE_EXTRA_CA_CERTS: caFile, ...env };
  return startServer('service', buildProduction(), database.url, trusting);
}

export async function setUpStage(): Promise<Stage> {
  const database = await startBenchDatabase('intake-fairness-pg-');
  const seeder = new pg.Client({ connectionString: database.url });
  await seeder.connect();
  const [a, b] = [await seedCompany(seeder, 'A', 1_000), await seedCompany(seeder, 'B', 20)];
  await seeder.query('VACUUM ANALYZE');
  await seeder.end();
  // One certificate for both receivers: two self-signed ones with the same name cannot both be trusted.
  const certificate = await localhostCertificate();
  const [slow, fast] = [await HttpsReceiver.start(certificate), await HttpsReceiver.start(certificate)];
  for (const receiver of [slow, fast]) onCleanUp(() => receiver.stop());
  slow.on('/a', { status: 204, waitFor: () => sleep(8_000) });
  // No request budget unless one is asked for: A's floods reach the service, so that what keeps B's
  // latency is each company's share, not A's requests refused at the door.
  const env = { RATE_LIMIT_PER_MINUTE: process.env.RATE_LIMIT_PER_MINUTE ?? '0' };
  const service = await startServiceTrusting(database, certificate.cert, env);
  const stage = { baseUrl: service.url, appToken: service.appToken, servicePid: service.pid };
  await appCall(stage, 'PUT', `/companies/${a.companyId}/webhook`, { url: slow.url('/a') });
  console.log("creating A's 40 maximal reports");
  const aMax = await createMaximalCompany(stage);
  const page = await fetch(`${stage.baseUrl}/reports?limit=20`, { headers: { 'x-api-key': b.key } });
  const ids = ((await page.json()) as { id: string }[]).map((r) => r.id);
  await appCall(stage, 'PUT', `/companies/${b.companyId}/webhook`, { url: fast.url('/b') });
  const toPublish = JSON.stringify(benchReport('b-to-publish', b.inspectorEmail));
  const publishReportId = await createReport(stage.baseUrl, b.key, toPublish);
  const { url: databaseUrl, postmaster } = database;
  return { ...stage, databaseUrl, postmaster, a, aMax, b: { ...b, ids, publishReportId }, receivers: [slow, fast] };
}

/**
 * Between phases: what a flood left queued in the service drains, and what it wrote reaches the disk
 * (a CHECKPOINT, then the operating system's dirty pages), so that no phase pays for the last one's writes.
 */
export async function settle(stage: Stage): Promise<void> {
  await sleep(2_000);
  const client = new pg.Client({ connectionString: stage.databaseUrl });
  await client.connect();
  await client.query('CHECKPOINT').finally(() => client.end());
  await promisify(execFile)('sync', [], { timeout: 60_000 });
}
