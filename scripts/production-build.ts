// The service as production runs it, for the benchmark and the tests: `npm run build`, then `npm run start:production`.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Builds src/ into dist/ and returns the node arguments of `npm run start:production` (read from
 * package.json, so the two never differ): spawn process.execPath with them to run the built service.
 */
export function buildProduction(): string[] {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['run', '--silent', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Error(`npm run build failed (exit ${result.status ?? result.signal}): ${result.stderr}`);
  }
  const { scripts } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const [command, ...args] = (scripts['start:production'] ?? '').split(/\s+/);
  if (command !== 'node') throw new Error('package.json: "start:production" must be "node [options] dist/server.js"');
  return args;
}

/**
 * Builds one of the benchmark's yardsticks (scripts/bench/<name>/app.ts) as the service is built
 * (esbuild, one ES module of its own code with its packages left as imports) into dist/bench/, and
 * returns the node arguments that run it: a yardstick runs as deployed code, as the service does.
 */
export function buildYardstick(name: 'straightforward' | 'newcomer'): string[] {
  const outfile = `dist/bench/${name}/app.js`;
  const esbuild = path.join(ROOT, 'node_modules', '.bin', 'esbuild');
  const args = [`scripts/bench/${name}/app.ts`, '--bundle', '--packages=external', '--platform=node'];
  const flags = ['--format=esm', '--target=node20', `--outfile=${outfile}`, '--log-level=warning'];
  const result = spawnSync(esbuild, [...args, ...flags], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`esbuild failed (exit ${result.status ?? result.signal}): ${result.stderr}`);
  return [outfile];
}
