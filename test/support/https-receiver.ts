import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { localhostCertificate } from '../../scripts/localhost-certificate.js';
import { createNotifier, type Notifier, type NotifierOptions } from '../../src/integrations/webhooks/notifier.js';
import { assertWebhookMatchesContract } from './contract.js';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * How the receiver answers a path: a status (and body; once `waitFor()` settles, if given: a slow
 * receiver, or one the test lets answer when it is ready), a redirect, or never (slower than any timeout).
 */
export type Behaviour =
  | { status: number; body?: string | Buffer; headers?: Record<string, string>; waitFor?: () => Promise<unknown> }
  | { redirectTo: string }
  | 'hang';

/**
 * A real HTTPS webhook receiver on 127.0.0.1 with a certificate made for the run (valid for
 * 127.0.0.1 and localhost). It records every request and checks each against the contract's
 * webhook that its `webhook-event-type` header names, so every request the service sends is validated.
 */
export class HttpsReceiver {
  readonly received: ReceivedWebhook[] = [];
  readonly contractErrors: Error[] = [];
  private readonly behaviours = new Map<string, Behaviour[]>();
  private readonly hanging = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly ca: string,
  ) {}

  /** Listens with `certificate`, or one made for it (two receivers trusted together need the same one: both are named localhost). */
  static async start(certificate?: { key: string; cert: string }): Promise<HttpsReceiver> {
    const { key, cert } = certificate ?? (await localhostCertificate());
    const server = createServer({ key, cert });
    const receiver = new HttpsReceiver(server, cert);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => receiver.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** An address on this receiver; `host` may be "localhost" to go through name resolution. */
  url(path: string, host = '127.0.0.1'): string {
    return `https://${host}:${this.port}${path}`;
  }

  /**
   * A notifier that trusts this receiver's certificate and may reach it (127.0.0.1/32 allowed, as
   * WEBHOOK_ALLOWED_CIDRS would), otherwise with the service's defaults (10 s, 32 deliveries in flight,
   * 4 of them per company, or all when fewer).
   */
  notifier(options: Partial<NotifierOptions> = {}): Notifier {
    const maxInFlight = options.maxInFlight ?? 32;
    return createNotifier({
      allowedCidrs: ['127.0.0.1/32'],
      timeoutMs: 10_000,
      ca: [this.ca],
      maxInFlight,
      maxInFlightPerCompany: Math.min(4, maxInFlight),
      ...options,
    });
  }

  /** How the path answers; given several, one request each in turn, the last for every request after. */
  on(path: string, ...behaviours: Behaviour[]): void {
    this.behaviours.set(path, behaviours);
  }

  at(path: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.path === path);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      this.received.push({ path, headers: req.headers, body });
      try {
        assertWebhookMatchesContract(req.headers, body);
      } catch (err) {
        this.contractErrors.push(err as Error);
      }
      const turns = this.behaviours.get(path);
      const behaviour = (turns && turns.length > 1 ? turns.shift() : turns?.[0]) ?? { status: 204 };
      if (behaviour === 'hang') {
        this.hanging.add(res);
      } else if ('redirectTo' in behaviour) {
        res.writeHead(302, { location: behaviour.redirectTo }).end();
      } else {
        // Held like a hanging answer meanwhile, so that stop() cuts it off.
        this.hanging.add(res);
        void (behaviour.waitFor?.() ?? Promise.resolve()).finally(() => {
          if (!this.hanging.delete(res)) return;
          res
            .writeHead(behaviour.status, { 'content-type': 'text/plain', ...behaviour.headers })
            .end(behaviour.body ?? '');
        });
      }
    });
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
