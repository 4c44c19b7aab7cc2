// No breaking change reaches partners unannounced: compares generated/partner-openapi.json with
// released/partner-openapi.json (api-smart-diff). `partner:check` fails on a breaking change without an
// info.version bump or a PARTNER-CHANGELOG.md section; `partner:release` records the current document.

import { copyFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiDiff } from 'api-smart-diff';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CURRENT = path.join(root, 'generated/partner-openapi.json');
export const RELEASED = path.join(root, 'released/partner-openapi.json');
export const CHANGELOG = path.join(root, 'PARTNER-CHANGELOG.md');

interface Versioned {
  info: { version: string };
}

/** The breaking differences from the released document to the current one, one line each. */
export function breakingChanges(released: object, current: object): string[] {
  // api-smart-diff rewrites the documents it compares (it resolves them in place): give it copies.
  return apiDiff(structuredClone(released), structuredClone(current))
    .filter((diff) => diff.type === 'breaking')
    .map((diff) => `${diff.action} ${diff.path.join('.')}`);
}

/** What keeps the current document from being published: empty when it may go out. */
export function announcementProblems(released: Versioned, current: Versioned, changelog: string): string[] {
  const { version } = current.info;
  if (version === released.info.version) {
    const breaking = breakingChanges(released, current);
    return breaking.length === 0
      ? []
      : [
          `breaking changes to the partner document of ${version}: bump info.version in openapi.yaml and say what ` +
            `changed under "## <version>" in PARTNER-CHANGELOG.md`,
          ...breaking.map((change) => `  ${change}`),
        ];
  }
  const escaped = version.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^## ${escaped}(\\s|$)`, 'm').test(changelog)
    ? []
    : [
        `info.version is ${version} (released: ${released.info.version}) but PARTNER-CHANGELOG.md has no "## ${version}"`,
      ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--release')) {
    copyFileSync(CURRENT, RELEASED);
    console.log(`released/partner-openapi.json is now the partner document of generated/`);
  } else {
    const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Versioned;
    const problems = announcementProblems(read(RELEASED), read(CURRENT), readFileSync(CHANGELOG, 'utf8'));
    for (const problem of problems) console.error(problem);
    process.exitCode = problems.length > 0 ? 1 : 0;
  }
}
