/**
 * Derives everything in generated/ from openapi.yaml:
 *   generated/api.ts                  types of the full document (the service's own handlers use them)
 *   generated/partner-openapi.yaml    the partner document: openapi.yaml without x-internal parts (redocly.yaml)
 *   generated/partner-openapi.json    the same document as JSON
 *   generated/partner-api.ts          types of the partner document, for the openapi-fetch client
 *   generated/partner-openapi-3.0.*   the partner document down-converted to OpenAPI 3.0.3, for 3.0-only tools
 * With --check nothing is written: it fails, naming the stale files, when a committed file differs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Converter } from '@apiture/openapi-down-convert';
import { stringify } from 'yaml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);
const check = process.argv.includes('--check');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'intake-gen-'));

/** Runs a CLI of node_modules/.bin quietly; on failure throws with its stderr. */
function run(command: string, args: string[], cwd = root): void {
  try {
    execFileSync(bin(command), args, {
      cwd,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
  } catch (err) {
    throw new Error(`${command} ${args.join(' ')} failed:\n${String((err as { stderr?: Buffer }).stderr ?? err)}`, {
      cause: err,
    });
  }
}

/** Removes every `key` of a schema-like object (and its descendants) for which `drop` says so. */
function prune(node: unknown, drop: (key: string, parent: Record<string, unknown>) => boolean): void {
  if (typeof node !== 'object' || node === null) return;
  const record = node as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (drop(key, record)) delete record[key];
    else prune(record[key], drop);
  }
}

/**
 * The partner document in OpenAPI 3.0.3 (openapi-backend, jest-openapi, dredd read no 3.1), by
 * @apiture/openapi-down-convert (const → enum, type arrays → nullable, examples); webhooks become x-webhooks.
 * What 3.0 has no word for and the converter leaves in is dropped: info.summary (the description
 * opens with the same) and `contains` on arrays (Names' description says "at least one non-blank name").
 */
function partnerDocument30(partnerJson: string): object {
  const partner = JSON.parse(partnerJson) as Record<string, unknown>;
  const document = new Converter(partner).convert() as Record<string, unknown>;
  delete (document.info as Record<string, unknown>).summary;
  // 3.0 has no webhooks: Redoc and other renderers read them from x-webhooks.
  document['x-webhooks'] = (
    new Converter({ openapi: '3.1.0', paths: partner.webhooks }).convert() as { paths: unknown }
  ).paths;
  prune(document.components, (key, parent) => key === 'contains' && parent.type === 'array');
  return document;
}

try {
  const out = (file: string) => path.join(tmp, file);
  run('redocly', ['bundle', 'partner', '--ext', 'yaml', '-o', out('partner-openapi.yaml')]);
  run('redocly', ['bundle', 'partner', '--ext', 'json', '-o', out('partner-openapi.json')]);
  // openapi-typescript would pick up redocly.yaml's `apis` and ignore its arguments: run it elsewhere.
  run('openapi-typescript', [path.join(root, 'openapi.yaml'), '-o', out('api.ts')], tmp);
  run('openapi-typescript', [out('partner-openapi.yaml'), '-o', out('partner-api.ts')], tmp);
  const document30 = partnerDocument30(readFileSync(out('partner-openapi.json'), 'utf8'));
  writeFileSync(out('partner-openapi-3.0.json'), `${JSON.stringify(document30, null, 2)}\n`);
  // By YAML 1.1 rules, as the service serves it (src/platform/http/docs.ts): dates and yes/no quoted for 1.1 loaders.
  writeFileSync(out('partner-openapi-3.0.yaml'), stringify(document30, { version: '1.1' }));

  const files = [
    'api.ts',
    'partner-openapi.yaml',
    'partner-openapi.json',
    'partner-api.ts',
    'partner-openapi-3.0.yaml',
    'partner-openapi-3.0.json',
  ];
  const stale = files.filter((file) => {
    const committed = path.join(root, 'generated', file);
    return !existsSync(committed) || readFileSync(committed, 'utf8') !== readFileSync(out(file), 'utf8');
  });
  if (check) {
    if (stale.length > 0) {
      console.error(`generated/ is stale (${stale.join(', ')}): run \`npm run gen\` and commit the result.`);
      process.exitCode = 1;
    }
  } else {
    for (const file of stale) writeFileSync(path.join(root, 'generated', file), readFileSync(out(file)));
    console.log(stale.length > 0 ? `updated generated/${stale.join(', generated/')}` : 'generated/ is up to date');
  }
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
