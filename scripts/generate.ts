/**
 * Derives everything in generated/ from openapi.yaml:
 *   generated/api.ts                  types of the full document (the service's own handlers use them)
 *   generated/partner-openapi.yaml    the partner document: openapi.yaml without x-internal parts (redocly.yaml)
 *   generated/partner-openapi.json    the same document as JSON
 *   generated/partner-api.ts          types of the partner document, for the openapi-fetch client
 * With --check nothing is written: it fails, naming the stale files, when a committed file differs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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

try {
  const out = (file: string) => path.join(tmp, file);
  run('redocly', ['bundle', 'partner', '--ext', 'yaml', '-o', out('partner-openapi.yaml')]);
  run('redocly', ['bundle', 'partner', '--ext', 'json', '-o', out('partner-openapi.json')]);
  // openapi-typescript would pick up redocly.yaml's `apis` and ignore its arguments: run it elsewhere.
  run('openapi-typescript', [path.join(root, 'openapi.yaml'), '-o', out('api.ts')], tmp);
  run('openapi-typescript', [out('partner-openapi.yaml'), '-o', out('partner-api.ts')], tmp);

  const files = ['api.ts', 'partner-openapi.yaml', 'partner-openapi.json', 'partner-api.ts'];
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
