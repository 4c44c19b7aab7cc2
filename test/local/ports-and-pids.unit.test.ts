import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { freePort, isAlive } from '../../src/local/ports-and-pids.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NOBODY = 65534;

describe('ports and pids', () => {
  it('freePort gives a loopback port nothing listens on, that a server can take', async () => {
    const port = await freePort();
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    expect(refused, `nothing listens on ${port}`).to.equal(true);
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
    await new Promise((resolve) => server.close(resolve));
  });

  it('isAlive: a running process is, one that exited and was reaped is not', async () => {
    expect(isAlive(process.pid)).to.equal(true);
    const child = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => child.once('exit', resolve));
    expect(isAlive(child.pid!)).to.equal(false);
  });

  it("isAlive: another user's process is alive (EPERM), as a PostgreSQL run as the OS user postgres", () => {
    // Asked by a user other than pid 1's owner (root): as root, the question is asked as "nobody".
    const asRoot = process.getuid?.() === 0;
    if (!asRoot) {
      expect(isAlive(1)).to.equal(true);
      return;
    }
    const asked = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        "import('./src/local/ports-and-pids.ts').then((m) => process.stdout.write(String(m.isAlive(1))))",
      ],
      { cwd: ROOT, uid: NOBODY, gid: NOBODY, encoding: 'utf8', timeout: 30_000 },
    );
    expect(asked.stdout, asked.stderr).to.equal('true');
  });
});
