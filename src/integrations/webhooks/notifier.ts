import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import type { Got } from 'got';
import { CompanyCounts } from '../../core/company-counts.js';
import { webhookDeliveriesTotal } from '../../platform/observability/metrics.js';
import { guardedAgent, refusedAddress, type AddressGuardOptions } from './address-guard.js';
import type { EventType } from '../../api-types.js';
import { signedHeaders } from './signing.js';

/** One webhook message: where it goes, how it is signed, and the exact body. */
export interface WebhookMessage {
  url: string;
  /** The secrets in force, newest first: one signature each. */
  secrets: readonly string[];
  webhookId: string;
  /** The event's type: its webhook-event-type header (the body was made by the type's row, event-types.ts). */
  type: EventType;
  payload: string;
  /** A test delivery: sent with `webhook-test: true` so receivers can tell it from a real publish. */
  test?: boolean;
}

/** What happened to one delivery attempt (one row of the delivery log). */
export interface DeliveryAttempt {
  attemptedAt: Date;
  durationMs: number;
  /** null when no response came. */
  httpStatus: number | null;
  /** "" when the receiver responded 2xx. */
  error: string;
  responseExcerpt: string;
  /** A 429 or 503's Retry-After, in milliseconds from the response (seconds or an HTTP date); absent otherwise. */
  retryAfterMs?: number;
}

/**
 * A slot for one delivery (call `release` when it is over), or why there is none: a sentence for the
 * caller's 503 that says whether the company's own deliveries or the process's fill the slots.
 */
export type Reservation = { release: () => void } | { refused: string };

export interface Notifier {
  /** The overall time limit of one delivery (WEBHOOK_TIMEOUT_MS). */
  readonly timeoutMs: number;
  /**
   * Takes one of the maxInFlight slots for a delivery of the company, at most maxInFlightPerCompany
   * of them for one company, or refuses when there is none for it: the caller refuses rather than queue.
   */
  reserve(companyId: string): Reservation;
  deliver(message: WebhookMessage): Promise<DeliveryAttempt>;
}

export interface NotifierOptions extends AddressGuardOptions {
  timeoutMs: number;
  /** Deliveries in flight at once at most (WEBHOOK_MAX_IN_FLIGHT). */
  maxInFlight: number;
  /**
   * Deliveries of one company in flight at once at most (WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY), so that
   * one company's slow receiver cannot take every slot and stop the others' publishes.
   */
  maxInFlightPerCompany: number;
}

/** The delivery log keeps at most this much of a receiver's response. */
export const EXCERPT_BYTES = 1024;

const USER_AGENT = 'inspection-report-intake-webhook/1';

/**
 * Sends webhooks with got: one attempt (retries are the inspector's decision), redirects not
 * followed (a 3xx is a failure: following one could lead past the address guard), an overall
 * time limit, and only HTTPS through the SSRF-guarded agent.
 *
 * got and the agent are loaded on the first delivery: most processes never publish, and the two
 * weigh on the memory of a process that loads them.
 */
export function createNotifier(options: NotifierOptions): Notifier {
  let loaded: Promise<{ client: Got; isTimeout: (err: unknown) => boolean }> | undefined;
  const load = async () => {
    const [{ default: got, TimeoutError }, agent] = await Promise.all([import('got'), guardedAgent(options)]);
    const client = got.extend({
      agent: { https: agent },
      followRedirect: false,
      throwHttpErrors: false,
      retry: { limit: 0 },
      timeout: { request: options.timeoutMs },
      headers: { 'user-agent': USER_AGENT },
    });
    return { client, isTimeout: (err: unknown) => err instanceof TimeoutError };
  };
  const inFlight = new CompanyCounts();
  return {
    timeoutMs: options.timeoutMs,
    reserve(companyId) {
      // When both are full, the process's bound is named: it is the one that is shared.
      if (inFlight.total >= options.maxInFlight) return { refused: 'too many webhook deliveries in flight' };
      if (inFlight.get(companyId) >= options.maxInFlightPerCompany) {
        return {
          refused: `too many webhook deliveries of this company in flight (its share of this process is ${options.maxInFlightPerCompany})`,
        };
      }
      inFlight.add(companyId, 1);
      let released = false;
      return {
        release: () => {
          if (released) return;
          released = true;
          inFlight.remove(companyId, 1);
        },
      };
    },
    async deliver(message) {
      const attemptedAt = new Date();
      const started = performance.now();
      // A failed load is not kept: the next delivery tries again.
      const { client, isTimeout } = await (loaded ??= load().catch((err: unknown) => {
        loaded = undefined;
        throw err;
      }));
      const outcome = await send(client, message, attemptedAt).catch((err: unknown) => ({
        httpStatus: null,
        error: describeFailure(err, options.timeoutMs, isTimeout),
        responseExcerpt: '',
      }));
      webhookDeliveriesTotal.inc({ outcome: outcome.error === '' ? 'sent' : 'failed' });
      return { attemptedAt, durationMs: Math.round(performance.now() - started), ...outcome };
    },
  };
}

type Outcome = Pick<DeliveryAttempt, 'httpStatus' | 'error' | 'responseExcerpt' | 'retryAfterMs'>;

/** Retry-After as RFC 9110 has it: a number of seconds, or an HTTP date; undefined when it is neither. */
export function retryAfterMs(header: string | string[] | undefined, now: number): number | undefined {
  if (typeof header !== 'string') return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) || !/[a-z]/i.test(value) ? undefined : Math.max(0, at - now);
}

async function send(client: Got, message: WebhookMessage, at: Date): Promise<Outcome> {
  // The agent map only has an HTTPS agent: an http:// address must never reach got.
  if (new URL(message.url).protocol !== 'https:') {
    return { httpStatus: null, error: 'the webhook address is not https://', responseExcerpt: '' };
  }
  const stream = client.stream.post(message.url, {
    body: message.payload,
    headers: {
      'content-type': 'application/json',
      'webhook-event-type': message.type,
      ...signedHeaders(message.secrets, message.webhookId, message.payload, at),
      ...(message.test ? { 'webhook-test': 'true' } : {}),
    },
  });
  // Errors after the outcome is known (the body cut short) must not crash the process.
  stream.on('error', () => undefined);
  const response = await new Promise<{ statusCode: number; headers: Record<string, string | string[] | undefined> }>(
    (resolve, reject) => {
      stream.once('response', resolve);
      stream.once('error', reject);
    },
  );
  const { statusCode } = response;
  const responseExcerpt = await readExcerpt(stream);
  const outcome = { httpStatus: statusCode, error: describeStatus(statusCode), responseExcerpt };
  const wait =
    statusCode === 429 || statusCode === 503 ? retryAfterMs(response.headers['retry-after'], Date.now()) : undefined;
  return wait === undefined ? outcome : { ...outcome, retryAfterMs: wait };
}

/**
 * At most the first EXCERPT_BYTES of the response, cut before a character the limit would split; the rest
 * is never downloaded (a receiver cannot flood memory).
 */
async function readExcerpt(stream: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= EXCERPT_BYTES) break;
    }
  } catch {
    // The status is known; a response body cut short only shortens the excerpt.
  }
  stream.destroy();
  // StringDecoder keeps back the bytes of a character cut short instead of writing U+FFFD for them.
  const text = new StringDecoder('utf8').write(Buffer.concat(chunks).subarray(0, EXCERPT_BYTES));
  // PostgreSQL text cannot hold NUL.
  return text.replaceAll('\u0000', '');
}

function describeStatus(status: number): string {
  if (status >= 200 && status < 300) return '';
  if (status >= 300 && status < 400) return `the receiver answered HTTP ${status} (redirects are not followed)`;
  return `the receiver answered HTTP ${status}`;
}

function describeFailure(err: unknown, timeoutMs: number, isTimeout: (err: unknown) => boolean): string {
  const address = refusedAddress(err) ?? refusedAddress((err as { cause?: unknown } | undefined)?.cause);
  if (address)
    return `address ${address} is refused (loopback, private, link-local and metadata addresses are not allowed)`;
  if (isTimeout(err)) return `no complete answer within ${timeoutMs} ms`;
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | undefined)?.code;
  if (code === 'ECONNREFUSED') return `connection refused (${message})`;
  if (typeof code === 'string' && /CERT|TLS|SSL|SIGNATURE|HANDSHAKE/.test(code))
    return `TLS error: ${message} (${code})`;
  return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
}
