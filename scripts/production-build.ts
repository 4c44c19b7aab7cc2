/** The service as production runs it, for the benchmark and the tests: `npm run build`, then `npm run start:production`. */
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
