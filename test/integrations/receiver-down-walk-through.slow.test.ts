import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual, promisify } from 'node:util';
import { expect } from 'chai';
import { APP_TOKEN, newCompany } from '../support/harness.js';
import { adminOf, ROOT, startReceiver, stop, type Receiver } from '../support/receiver-process.js';
import { startServer, type RunningServer } from '../support/server-process.js';

const run = promisify(execFile);

/**
 * docs/walk-throughs.md's "When your receiver is down", run as written: the test reads the section's sh
 * block and runs its steps in order: `… npm start` as a service process with the variables the line sets,
 * `npm run webhook-receiver` as the receiver, each curl through sh, the placeholders (`irk_…`,
 * `<reportId>`, `msg_…`, …) replaced by what the set-up and earlier answers gave. Each `# →` line's
 * fields are looked for in the answer (a field shown with `…` only has to be there), and each `# the
 * receiver prints:` line is the receiver's next verdict (`…` standing for anything).
 */

const WALK_THROUGHS = 'docs/walk-throughs.md';
const SECTION = '## When your receiver is down';
/** How long a step's answer or the receiver's line may take: beyond one wait of the walk-through's schedule. */
const STEP_MS = 30_000;

interface Step {
  command: string;
  answer?: string;
  prints: string[];
}

/** The section's sh block as steps: lines joined at a trailing backslash, trailing comments dropped. */
function walkThrough(page: string): Step[] {
  const section = page.split(`\n${SECTION}\n`)[1]?.split(/^#{2,3} /m)[0] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error(`${WALK_THROUGHS} has no sh block under "${SECTION}"`);
  const steps: Step[] = [];
  for (const line of block.replace(/\\\n\s*/g, '').split('\n')) {
    const comment = /^#\s*(.*)$/.exec(line)?.[1];
    if (comment === undefined) {
      const command = line.replace(/\s{2,}#.*$/, '').trim();
      if (command) steps.push({ command, prints: [] });
      continue;
    }
    const step = steps.at(-1);
    const expects = comment.startsWith('→ ') || comment.startsWith('the receiver prints: ');
    if (expects && !step) throw new Error(`"${line}" follows no command`);
    if (comment.startsWith('→ ')) step!.answer = comment.slice(2);
    if (comment.startsWith('the receiver prints: ')) step!.prints.push(comment.slice('the receiver prints: '.length));
  }
  return steps;
}

/** Every field of a JSON value, at any depth. */
function* fields(value: unknown): Generator<[string, unknown]> {
  if (Array.isArray(value)) for (const item of value) yield* fields(item);
  else if (value !== null && typeof value === 'object') {
    for (const entry of Object.entries(value)) {
      yield entry;
      yield* fields(entry[1]);
    }
  }
}

/** A `"field": value` of a sketch: a string, number, boolean or null written out, or `[` / `{` opening one. */
const FIELD = /"(\w+)":\s*("(?:[^"\\]|\\.)*"|-?\d+|true|false|null|[[{])/g;

/** What of the sketch (`{"webhook": {"outcome": "retrying", "eventId": "msg_…"}}`) the answer lacks. */
function lacking(answer: unknown, sketch: string): string[] {
  const lacks = sketch.startsWith('[') && !(Array.isArray(answer) && answer.length > 0) ? ['a non-empty array'] : [];
  for (const [pair, field, value = ''] of sketch.matchAll(FIELD)) {
    const any = value.includes('…') || value === '[' || value === '{';
    const want: unknown = any ? undefined : JSON.parse(value);
    if (![...fields(answer)].some(([k, v]) => k === field && (any || isDeepStrictEqual(v, want)))) lacks.push(pair);
  }
  return lacks;
}

/** The promise, or an error naming `what` once STEP_MS have passed. */
async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      promise,
      sleep(STEP_MS, undefined, { signal: timer.signal }).then(() => {
        throw new Error(`${what}: nothing within ${STEP_MS} ms`);
      }),
    ]);
  } finally {
    timer.abort();
  }
}

type Answer = { id?: string; webhook?: { eventId?: string } };

/**
 * Runs a curl step through sh and checks its answer against the sketch. A read is asked again until it
 * shows what the walk-through says (the feed shows an event a moment after its commit; the delivery waits for
 * the schedule's next attempt); anything else is sent once.
 */
async function curl(command: string, sketch: string | undefined): Promise<Answer> {
  const deadline = Date.now() + (command.includes(' -X ') ? 0 : STEP_MS);
  for (;;) {
    const { stdout } = await run('sh', ['-c', command], { cwd: ROOT });
    let answer: Answer;
    try {
      answer = JSON.parse(stdout) as Answer;
    } catch {
      throw new Error(`${command}\nanswered no JSON: ${stdout}`);
    }
    const lacks = sketch === undefined ? [] : lacking(answer, sketch);
    if (lacks.length === 0) return answer;
    if (Date.now() >= deadline) {
      expect(lacks, `${command}\nanswered ${stdout}`).to.deep.equal([]);
    }
    await sleep(200);
  }
}

/** The receiver's line as a pattern: the text as written, `…` standing for anything. */
const printed = (line: string) =>
  new RegExp(
    `^${line
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );

describe('docs/walk-throughs.md: when your receiver is down', function () {
  this.timeout(180_000);
  let server: RunningServer | undefined;
  let receiver: Receiver | undefined;

  afterEach(async () => {
    if (receiver) await stop(receiver);
    server?.kill();
  });

  /** The walk-through's placeholders and what stands for them here, filled in as the steps answer. */
  const known = new Map<string, string>();
  const fill = (text: string) => [...known].reduce((filled, [from, to]) => filled.replaceAll(from, to), text);

  /** `… npm start`: the service with the variables the line sets; then the company, key and address "set as above". */
  async function startService(assignments: string, receiverPort: number): Promise<void> {
    const env = Object.fromEntries(
      assignments
        .trim()
        .split(/\s+/)
        .filter((set) => set !== '')
        .map((set) => set.split(/=(.*)/s).slice(0, 2)),
    );
    // Background attempts are on by default; the test servers' default turns them off.
    server = await startServer(undefined, { ...env, WEBHOOK_WORKER: 'true' });
    const { companyId, key } = await newCompany();
    const address = `https://127.0.0.1:${receiverPort}/webhook`;
    const { secret } = await adminOf(server.baseUrl)('set-webhook', companyId, address);
    known.set('http://127.0.0.1:3000', server.baseUrl).set('<companyId>', companyId);
    known.set('irk_…', key).set('whsec_…', secret);
  }

  it('publishes with whenDeliveryFails "retry", the event pending in the feed, then delivered and redelivered', async () => {
    const steps = walkThrough(await readFile(path.join(ROOT, WALK_THROUGHS), 'utf8'));
    // The receiver's first start writes the certificate the service trusts; it is down when the steps begin.
    receiver = await startReceiver(['whsec_bm90LXlldC1zZXQ=']);
    const port = receiver.port;
    await stop(receiver);
    known.clear();
    known.set('iat_…', APP_TOKEN);

    for (const step of steps) {
      const command = fill(step.command);
      if (/…|<\w+>/.test(command)) throw new Error(`the step uses a value no step before gave: ${step.command}`);
      const start = /^((?:\w+=\S+\s+)*)npm start$/.exec(command);
      const listen = /^WEBHOOK_SECRET=(\S+) npm run webhook-receiver$/.exec(command);
      if (start) await startService(start[1]!, port);
      else if (listen) receiver = await startReceiver([listen[1]!], port);
      else if (command.startsWith('curl ')) {
        const answer = await curl(command, step.answer && fill(step.answer));
        if (command.includes('/reports/new ')) known.set('<reportId>', answer.id!);
        if (answer.webhook?.eventId) known.set('msg_…', answer.webhook.eventId);
      } else throw new Error(`a step this test cannot run: ${step.command}`);
      for (const line of step.prints) {
        const verdict = await within(receiver!.next(/^[✔✘]/), `the receiver printing "${line}"`);
        expect(verdict).to.match(printed(fill(line)));
      }
    }
    // The steps reached the event: every placeholder the walk-through uses was filled.
    expect([...known.keys()]).to.include.members(['<reportId>', 'msg_…']);
  });
});
