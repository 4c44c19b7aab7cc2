import net from 'node:net';

/**
 * A TCP port on 127.0.0.1 that nothing listens on at the moment: bound once by the OS, then released.
 * Another process may take it before the caller does; the callers here start their listener at once.
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Whether a process with this pid exists. EPERM means it exists but belongs to another user (an
 * embedded PostgreSQL runs as the OS user "postgres" when started as root): alive all the same.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
