// Operator commands (`npm run admin -- help` lists them) over the application API of a running
// service, so they obey every rule the service enforces. API_URL is the service (default
// http://127.0.0.1:3000); APP_TOKEN the application token, by default read from .data/credentials.json.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import createClient from 'openapi-fetch';
import type { components, paths } from '../generated/api.js';

const CREDENTIALS_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../.data/credentials.json');

const USAGE = `Usage: npm run admin -- <command> [arguments]

  create-company <name>                          → {id, name}
  add-inspector <companyId> <name> <email>       → {id, name, email}
  create-key <companyId> [--test]                → {id, key, mode, prefix, createdAt}  (the key is shown only now)
  list-keys <companyId>                          (live and test keys: mode tells them apart)
  revoke-key <companyId> <keyId>
  set-webhook <companyId> <https-url> [--events TYPES] [--test]
                                                 → {url, secret, eventTypes}  (a new secret every time, no overlap;
                                                   TYPES: report.published,report.started; without --events they stay)
  test-webhook <companyId> [--test]              → {outcome, deliveryId, status}  (a signed sample report, webhook-test: true)
  rotate-secret <companyId> [--overlap SECONDS] [--test]
                                                 → {secret, previousSecretExpiresAt}  (the old secret signs too until then; default 86400)
  integration <companyId>                        → {active, webhookUrl, secret, previousSecretExpiresAt, eventTypes, keys}
  revoke-integration <companyId>                 (deletes every key, live and test, and both webhook addresses)
  start <companyId> <reportId>
  publish <companyId> <reportId> <publishedUrl> [--no-notify]
  deliveries <companyId> [limit]                 (the webhook delivery log, newest first)

The sandbox: create-key --test issues a test key (irk_test_…), which works only in the company's sandbox;
--test on set-webhook, test-webhook and rotate-secret sets, tests and rotates the sandbox's own webhook
address and secret (where a test key's sandbox publish sends the webhook) instead of the live ones.

Environment: API_URL (default http://127.0.0.1:3000), APP_TOKEN (default: .data/credentials.json).`;

class UsageError extends Error {}

function appToken(): string {
  if (process.env.APP_TOKEN) return process.env.APP_TOKEN;
  if (existsSync(CREDENTIALS_FILE)) {
    return (JSON.parse(readFileSync(CREDENTIALS_FILE, 'utf8')) as { appToken: string }).appToken;
  }
  throw new UsageError('no application token: set APP_TOKEN (or start the service once with `npm start`)');
}

type Client = ReturnType<typeof createClient<paths>>;
type Result = { data?: unknown; error?: unknown; response: Response };
/** A command's request; `test` is whether `--test` was given (the sandbox), for the commands that take it. */
type Command = (client: Client, args: string[], test: boolean) => Promise<Result>;

const company = (companyId: string) => ({ params: { path: { companyId } } });
const report = (companyId: string, reportId: string) => ({ params: { path: { companyId, reportId } } });

/** The commands that take `--test`: a test key, or the sandbox's webhook address and secret. */
const TEST_COMMANDS: ReadonlySet<string> = new Set(['create-key', 'set-webhook', 'test-webhook', 'rotate-secret']);

/** Each command: its arity (required arguments) and the one request it makes. */
const COMMANDS: Record<string, [number, Command]> = {
  'create-company': [1, (c, [name]) => c.POST('/internal/companies', { body: { name: name! } })],
  'add-inspector': [
    3,
    (c, [id, name, email]) =>
      c.POST('/internal/companies/{companyId}/users', { ...company(id!), body: { name: name!, email: email! } }),
  ],
  'create-key': [
    1,
    (c, [id], test) =>
      // Without --test no body, as before test keys: a live key.
      test
        ? c.POST('/internal/companies/{companyId}/api-keys', { ...company(id!), body: { mode: 'test' } })
        : c.POST('/internal/companies/{companyId}/api-keys', company(id!)),
  ],
  'list-keys': [1, (c, [id]) => c.GET('/internal/companies/{companyId}/api-keys', company(id!))],
  'revoke-key': [
    2,
    (c, [id, keyId]) =>
      c.DELETE('/internal/companies/{companyId}/api-keys/{keyId}', {
        params: { path: { companyId: id!, keyId: keyId! } },
      }),
  ],
  'set-webhook': [
    2,
    (c, [id, url, flag, types], test) => {
      if (flag !== undefined && (flag !== '--events' || types === undefined))
        throw new UsageError('set-webhook takes --events TYPE[,TYPE…]');
      // The service checks the names and answers 400 naming the field.
      const eventTypes = types?.split(',') as components['schemas']['EventType'][] | undefined;
      const request = { ...company(id!), body: { url: url!, ...(eventTypes && { eventTypes }) } };
      return test
        ? c.PUT('/internal/companies/{companyId}/sandbox/webhook', request)
        : c.PUT('/internal/companies/{companyId}/webhook', request);
    },
  ],
  'test-webhook': [
    1,
    (c, [id], test) =>
      test
        ? c.POST('/internal/companies/{companyId}/sandbox/webhook/test', company(id!))
        : c.POST('/internal/companies/{companyId}/webhook/test', company(id!)),
  ],
  'rotate-secret': [
    1,
    (c, [id, flag, seconds], test) => {
      let request: ReturnType<typeof company> & { body?: { overlapSeconds: number } } = company(id!);
      if (flag !== undefined) {
        if (flag !== '--overlap' || seconds === undefined) {
          throw new UsageError('rotate-secret takes --overlap SECONDS');
        }
        // The service checks the range (0-604800) and answers 400 naming the field.
        if (!/^\d+$/.test(seconds)) throw new UsageError(`--overlap needs a whole number of seconds, got "${seconds}"`);
        request = { ...request, body: { overlapSeconds: Number(seconds) } };
      }
      return test
        ? c.POST('/internal/companies/{companyId}/sandbox/webhook/secret', request)
        : c.POST('/internal/companies/{companyId}/webhook/secret', request);
    },
  ],
  integration: [1, (c, [id]) => c.GET('/internal/companies/{companyId}/integration', company(id!))],
  'revoke-integration': [1, (c, [id]) => c.DELETE('/internal/companies/{companyId}/integration', company(id!))],
  start: [
    2,
    (c, [id, reportId]) => c.POST('/internal/companies/{companyId}/reports/{reportId}/start', report(id!, reportId!)),
  ],
  publish: [
    3,
    (c, [id, reportId, publishedUrl, flag]) => {
      if (flag !== undefined && flag !== '--no-notify') throw new UsageError(`unknown option ${flag}`);
      return c.POST('/internal/companies/{companyId}/reports/{reportId}/publish', {
        ...report(id!, reportId!),
        body: { publishedUrl: publishedUrl!, notifyIntegration: flag !== '--no-notify' },
      });
    },
  ],
  deliveries: [
    1,
    (c, [id, limit]) =>
      c.GET('/internal/companies/{companyId}/webhook-deliveries', {
        params: { path: { companyId: id! }, query: limit === undefined ? {} : { limit: Number(limit) } },
      }),
  ],
};

async function main(argv: string[]): Promise<number> {
  const [name, ...given] = argv;
  if (name === undefined || name === 'help' || name === '--help') {
    console.log(USAGE);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`unknown command "${name}"`);
  const [arity, run] = command;
  // --test may come anywhere after the command's name; it is not one of its arguments.
  const args = given.filter((arg) => arg !== '--test');
  const test = args.length < given.length;
  if (test && !TEST_COMMANDS.has(name)) throw new UsageError(`${name} takes no --test`);
  if (args.length < arity) throw new UsageError(`${name} needs ${arity} argument(s)`);

  const client = createClient<paths>({
    baseUrl: process.env.API_URL || 'http://127.0.0.1:3000',
    headers: { Authorization: `Bearer ${appToken()}` },
  });
  const { data, error, response } = await run(client, args, test);
  if (!response.ok) {
    const message = (error as { error?: string } | undefined)?.error ?? response.statusText;
    console.error(`Error ${response.status}: ${message}`);
    return 1;
  }
  console.log(response.status === 204 ? 'done' : JSON.stringify(data, null, 2));
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n\n${USAGE}`);
    } else {
      // fetch() fails with "fetch failed" and the network error as its cause.
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      console.error(
        err instanceof TypeError && cause
          ? `cannot reach the service at ${process.env.API_URL || 'http://127.0.0.1:3000'} (${cause.code ?? cause.message}): is it running (npm start)?`
          : `failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    process.exit(1);
  },
);
