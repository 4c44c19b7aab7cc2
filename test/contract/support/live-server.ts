import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { app } from '../../support/harness.js';

export interface LiveServer {
  baseUrl: string;
  close(): Promise<void>;
}

/** The service on a real socket (127.0.0.1, a free port), for clients that are not supertest. */
export async function startLiveServer(): Promise<LiveServer> {
  const server = http.createServer(app());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
