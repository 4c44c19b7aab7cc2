import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startLiveServer, type LiveServer } from './support/live-server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = (name: string) => path.join(ROOT, 'node_modules/.bin', name);
const run = promisify(execFile);

/** What an integrator compiles: a TypeScript client and zod schemas, each made by its generator from the served document. */
const CHECK = `
import { createOrUpdateReport, getReport, listReports } from './hey/index';
import { Report, ReportInput } from './typed';

export async function useHeyApi(reportId: string): Promise<string> {
  const created = await createOrUpdateReport({ body: { clientNames: ['Jordan Smith'], inspectionDate: '2026-03-14' } });
  const page = await listReports({ query: { limit: 20, restId: 'crm 42' } });
  const one = await getReport({ path: { reportId } });
  return [created.data?.id, page.data?.length, one.data?.status].join();
}

export function useZod(body: unknown, answer: unknown): string {
  ReportInput.parse(body);
  return Report.parse(answer).status;
}
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'Bundler',
    lib: ['ES2023', 'DOM', 'DOM.Iterable'],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  },
  include: ['hey', 'typed.ts', 'check.ts'],
};

describe('clients generated from the served partner document', () => {
  let server: LiveServer;
  let dir: string;

  before(async () => {
    server = await startLiveServer();
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-clients-'));
  });

  after(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('compile: @hey-api/openapi-ts (defaulting to the address it was fetched from) and typed-openapi with zod', async function () {
    this.timeout(180_000);
    const document = await (await fetch(`${server.baseUrl}/openapi.yaml`)).text();
    await writeFile(path.join(dir, 'partner.yaml'), document);
    await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    const options = { cwd: dir, timeout: 120_000 };
    await run(bin('openapi-ts'), ['-i', 'partner.yaml', '-o', 'hey'], options);
    await run(bin('typed-openapi'), ['partner.yaml', '-o', 'typed.ts', '-r', 'zod'], options);
    await writeFile(path.join(dir, 'check.ts'), CHECK);
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));

    expect(await readFile(path.join(dir, 'hey/client.gen.ts'), 'utf8')).to.include(`baseUrl: '${server.baseUrl}'`);
    const compiled = await run(bin('tsc'), ['-p', dir], options).then(
      () => '',
      (err: { stdout?: string }) => err.stdout ?? String(err),
    );
    expect(compiled, 'tsc errors in the generated clients').to.equal('');
  });
});
