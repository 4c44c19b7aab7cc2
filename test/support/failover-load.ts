// Steady traffic of every kind against service processes, recording every answer and every write the
// service acknowledged, for a test that changes the database under it (a failover).
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { contract } from './contract.js';
import { APP_TOKEN, reportInput, unique } from './harness.js';

/** The longest a request may take before it counts as hung: the database's wait, plus a margin. */
const BUDGET_MS = 15_000;

export interface Answer {
  label: string;
  server: number;
  status: number;
  ms: number;
  at: number;
  body: unknown;
  /** Why the answer is not one the service may give (undeclared, not JSON, no Retry-After on 503, …). */
  problem?: string;
}

export interface Company {
  companyId: string;
  key: string;
  inspector: string;
}

const bearer = { Authorization: `Bearer ${APP_TOKEN}` };

/** Everything acknowledged with a 2xx, to be found on the new primary. */
export interface Acknowledged {
  /** restId → report id, of creates without an Idempotency-Key. */
  creates: Map<string, string>;
  /** Idempotency-Key → the create's body and the id it answered. */
  keyed: Map<string, { body: Record<string, unknown>; id: string }>;
  /** report id → every notes value sent, in order, and how many of them were acknowledged (the last acked index). */
  updates: Map<string, { sent: string[]; acked: number }>;
  /** report id → the event its publish recorded. */
  published: Map<string, string>;
  /** key id → its key; revoked: the ids whose revocation was acknowledged. */
  keys: Map<string, string>;
  revoked: Set<string>;
  /** Keys whose revocation was answered 503: it may have committed before the answer was lost. */
  revocationUnsure: Set<string>;
}

export class Workload {
  readonly answers: Answer[] = [];
  readonly acked: Acknowledged = {
    creates: new Map(),
    keyed: new Map(),
    updates: new Map(),
    published: new Map(),
    keys: new Map(),
    revoked: new Set(),
    revocationUnsure: new Set(),
  };
  /** The events the feed listed, in the order it listed them (a repeat is a defect). */
  readonly feed: string[] = [];
  private feedCursor: string | undefined;
  private stopped = false;
  private loops: Promise<void>[] = [];
  private turn = 0;

  constructor(
    private readonly servers: string[],
    readonly company: Company,
  ) {}

  start(): void {
    this.loops = [
      this.loop(() => this.create()),
      this.loop(() => this.create()),
      this.loop(() => this.createKeyed()),
      this.loop(() => this.update()),
      this.loop(() => this.read()),
      this.loop(() => this.publish()),
      this.loop(() => this.publish()),
      this.loop(() => this.keyLifecycle()),
      this.loop(() => this.pollFeed()),
    ];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  /** One request to the next process in turn (or the given one), recorded and checked against openapi.yaml. */
  async send(
    label: string,
    method: string,
    path: string,
    { headers = {}, body, server }: { headers?: Record<string, string>; body?: unknown; server?: number } = {},
  ): Promise<Answer> {
    const index = server ?? this.turn++ % this.servers.length;
    const started = Date.now();
    let answer: Answer;
    try {
      const res = await fetch(`${this.servers[index]}${path}`, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(BUDGET_MS),
      });
      const text = await res.text();
      const parsed = parse(text);
      const headersOf = Object.fromEntries(res.headers);
      const problems = contract.responseProblems(method, path, {
        status: res.status,
        body: parsed,
        headers: headersOf,
        text,
      });
      if (res.status === 503 && !headersOf['retry-after']) problems.push('503 without Retry-After');
      answer = { label, server: index, status: res.status, ms: Date.now() - started, at: started, body: parsed };
      if (problems.length > 0) answer.problem = problems.join('; ');
    } catch (err) {
      answer = { label, server: index, status: 0, ms: Date.now() - started, at: started, body: undefined };
      answer.problem = `no answer: ${String(err)}`;
    }
    this.answers.push(answer);
    return answer;
  }

  private async loop(step: () => Promise<void>): Promise<void> {
    while (!this.stopped) {
      await step();
      await sleep(20);
    }
  }

  private partner(): Record<string, string> {
    return { 'X-API-KEY': this.company.key };
  }

  private async create(): Promise<void> {
    const restId = unique('failover');
    const res = await this.send('create', 'POST', '/reports/new', {
      headers: this.partner(),
      body: reportInput({ restId, inspectorEmails: this.company.inspector }),
    });
    if (res.status === 200) this.acked.creates.set(restId, (res.body as { id: string }).id);
  }

  private async createKeyed(): Promise<void> {
    const key = randomUUID();
    const body = reportInput({ notes: `keyed ${key}` });
    const res = await this.send('create keyed', 'POST', '/reports/new', {
      headers: { ...this.partner(), 'Idempotency-Key': key },
      body,
    });
    if (res.status === 200) this.acked.keyed.set(key, { body, id: (res.body as { id: string }).id });
  }

  /** Updates one report again and again (one loop: its values are sent in order). */
  private async update(): Promise<void> {
    const [restId, id] = [...this.acked.creates].at(0) ?? [];
    if (!restId || !id) return;
    const history = this.acked.updates.get(id) ?? { sent: [], acked: -1 };
    this.acked.updates.set(id, history);
    const notes = `update ${history.sent.length}`;
    history.sent.push(notes);
    const res = await this.send('update', 'POST', '/reports/new', {
      headers: this.partner(),
      body: reportInput({ restId, notes }),
    });
    if (res.status === 200) history.acked = history.sent.length - 1;
  }

  private async read(): Promise<void> {
    const ids = [...this.acked.creates.values()];
    const id = ids[ids.length - 1];
    if (id) await this.send('read', 'GET', `/reports/${id}`, { headers: this.partner() });
  }

  /** A report created, then published with its webhook and background retries. */
  private async publish(): Promise<void> {
    const created = await this.send('create', 'POST', '/reports/new', {
      headers: this.partner(),
      body: reportInput({ restId: unique('published') }),
    });
    if (created.status !== 200) return;
    const id = (created.body as { id: string }).id;
    const res = await this.send(
      'publish',
      'POST',
      `/internal/companies/${this.company.companyId}/reports/${id}/publish`,
      {
        headers: bearer,
        body: { publishedUrl: 'https://reports.example.com/1', notifyIntegration: true, whenDeliveryFails: 'retry' },
      },
    );
    if (res.status === 200)
      this.acked.published.set(id, (res.body as { webhook: { eventId: string } }).webhook.eventId);
  }

  /** A key generated, used, then revoked. */
  private async keyLifecycle(): Promise<void> {
    const path = `/internal/companies/${this.company.companyId}/api-keys`;
    const made = await this.send('key generated', 'POST', path, { headers: bearer });
    if (made.status !== 201) return;
    const { id, key } = made.body as { id: string; key: string };
    this.acked.keys.set(id, key);
    await this.send('read', 'GET', '/auth', { headers: { 'X-API-KEY': key } });
    const revoked = await this.send('key revoked', 'DELETE', `${path}/${id}`, { headers: bearer });
    if (revoked.status === 204) this.acked.revoked.add(id);
    else this.acked.revocationUnsure.add(id);
  }

  /** Follows the events feed from where it stopped. */
  async pollFeed(): Promise<void> {
    const after = this.feedCursor ? `&after=${this.feedCursor}` : '';
    const res = await this.send('feed', 'GET', `/events?limit=100${after}`, { headers: this.partner() });
    if (res.status !== 200) return;
    const events = res.body as { id: string }[];
    this.feed.push(...events.map((e) => e.id));
    this.feedCursor = events.at(-1)?.id ?? this.feedCursor;
  }
}

function parse(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return text;
  }
}
