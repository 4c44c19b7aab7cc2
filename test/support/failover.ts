// A primary with a synchronous streaming standby (Debian's PostgreSQL), and one address in front of them
// that moves from the old primary to the promoted standby, as a managed database's endpoint or a
// virtual IP does.
import net from 'node:net';
import pg from 'pg';
import { startStandby, startStockPostgres, urlOf, type StockPostgres } from './stock-postgres.js';

const STANDBY_NAME = 'standby1';

export interface ReplicatedPair {
  primary: StockPostgres;
  standby: StockPostgres;
  /** Promotes the standby (pg_promote, waiting until it accepts writes). */
  promote(): Promise<void>;
  remove(): Promise<void>;
}

/**
 * A primary whose every commit waits for the standby (synchronous_standby_names, synchronous_commit
 * on), and the standby, made by pg_basebackup -R and started. The standby's own configuration names no
 * synchronous standby, so once promoted it commits alone.
 */
export async function startReplicatedPair(): Promise<ReplicatedPair> {
  const primary = await startStockPostgres({
    synchronous_standby_names: `'${STANDBY_NAME}'`,
    synchronous_commit: 'on',
  });
  let standby: StockPostgres | undefined;
  try {
    standby = await startStandby(primary, STANDBY_NAME);
    await waitStreaming(primary);
  } catch (err) {
    await standby?.remove();
    await primary.remove();
    throw err;
  }
  const promoted: StockPostgres = standby;
  return {
    primary,
    standby: promoted,
    async promote() {
      // Unbounded by a statement timeout the role may carry (the PgBouncer run sets one): pg_promote has its own wait.
      const client = new pg.Client({
        connectionString: promoted.url,
        connectionTimeoutMillis: 5_000,
        options: '-c statement_timeout=0',
      });
      await client.connect();
      try {
        const { rows } = await client.query<{ promoted: boolean }>('SELECT pg_promote(true, 30) AS promoted');
        if (!rows[0]?.promoted) throw new Error('the standby was not promoted within 30 s');
      } finally {
        await client.end();
      }
    },
    async remove() {
      await Promise.all([primary.remove(), promoted.remove()]);
    },
  };
}

/** Waits (bounded) until the primary streams to the standby synchronously. */
async function waitStreaming(primary: StockPostgres): Promise<void> {
  const client = new pg.Client({ connectionString: primary.url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    for (let tries = 0; tries < 300; tries++) {
      const { rows } = await client.query<{ sync_state: string }>(
        'SELECT sync_state FROM pg_stat_replication WHERE application_name = $1',
        [STANDBY_NAME],
      );
      if (rows[0]?.sync_state === 'sync') return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the standby did not start streaming synchronously within 30 s');
  } finally {
    await client.end();
  }
}

/**
 * A TCP proxy on a loopback port that forwards every connection to the server it points at. Switching
 * it cuts every connection it carries (the old server is gone) and sends new ones to the new server;
 * a connection the server refuses is closed at once.
 */
export class MovingAddress {
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    private target: number,
  ) {}

  static async start(targetPort: number): Promise<MovingAddress> {
    const server = net.createServer();
    const address = new MovingAddress(server, targetPort);
    server.on('connection', (client) => address.forward(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return address;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** The URL of a database behind the address (the same user and password as the servers'). */
  url(database = 'postgres'): string {
    return urlOf(this.port, database);
  }

  switchTo(targetPort: number): void {
    this.target = targetPort;
    for (const socket of this.sockets) socket.destroy();
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private forward(client: net.Socket): void {
    const upstream = net.connect(this.target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
