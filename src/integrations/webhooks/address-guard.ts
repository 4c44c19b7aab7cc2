import dns, { type LookupAddress } from 'node:dns';
import { isIP, Socket, type LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import ipaddr from 'ipaddr.js';
import type { RequestFilteringHttpsAgent } from 'request-filtering-agent';

export interface AddressGuardOptions {
  /** CIDRs that may be reached although private or loopback (WEBHOOK_ALLOWED_CIDRS; local testing only). */
  allowedCidrs: readonly string[];
  /** Trusted CA certificates replacing Node's defaults (tests); production uses NODE_EXTRA_CA_CERTS. */
  ca?: string[];
}

/** A connection the guard refused; `address` is the IP address that was refused. */
export class RefusedAddressError extends Error {
  constructor(
    readonly address: string,
    reason: string,
  ) {
    super(`address ${address} is refused: ${reason}`);
  }
}

/**
 * IPv6 forms that carry an IPv4 address, and where its four bytes sit: IPv4-compatible (::/96,
 * deprecated), IPv4-mapped, NAT64 (RFC 6052's well-known prefix) and 6to4 (2002::/16).
 */
const EMBEDDING: [prefix: [ipaddr.IPv6, number], offset: number][] = [
  [ipaddr.IPv6.parseCIDR('::/96'), 12],
  [ipaddr.IPv6.parseCIDR('::ffff:0:0/96'), 12],
  [ipaddr.IPv6.parseCIDR('64:ff9b::/96'), 12],
  [ipaddr.IPv6.parseCIDR('2002::/16'), 2],
];

/**
 * The check request-filtering-agent lacks: its ipaddr.js calls ::/96 (`[::127.0.0.1]`) public unicast.
 * An IPv6 address embedding an IPv4 address is refused when that IPv4 address would be: not public
 * unicast, unless in an allowed IPv4 CIDR. (The agent then refuses the mapped, NAT64 and 6to4 ranges
 * anyway unless the IPv6 address itself is allowed; with this check, allowing 64:ff9b::/96 on an
 * IPv6-only network still keeps 64:ff9b::127.0.0.1 out.)
 */
export function embeddedIpv4Refusal(address: string, allowedCidrs: readonly string[]): Error | undefined {
  if (isIP(address) !== 6) return undefined;
  const ip = ipaddr.IPv6.parse(address);
  const found = EMBEDDING.find(([prefix]) => ip.match(prefix));
  if (!found) return undefined;
  const bytes = ip.toByteArray();
  const ipv4 = new ipaddr.IPv4(bytes.slice(found[1], found[1] + 4));
  const allowed = allowedCidrs
    .filter((cidr) => isIP(cidr.split('/')[0]!) === 4)
    .some((cidr) => ipv4.match(ipaddr.IPv4.parseCIDR(cidr)));
  if (allowed || ipv4.range() === 'unicast') return undefined;
  return new RefusedAddressError(address, `it embeds the IPv4 address ${ipv4.toString()} (${ipv4.range()})`);
}

/** dns.lookup that fails when a resolved address embeds a refused IPv4 address. */
function guardedLookup(lookup: LookupFunction, allowedCidrs: readonly string[]): LookupFunction {
  const guarded = (hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    lookup(
      hostname,
      options,
      (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => {
        if (err) return callback(err);
        const addresses = typeof address === 'string' ? [address] : address.map((a) => a.address);
        const refusal = addresses.map((a) => embeddedIpv4Refusal(a, allowedCidrs)).find(Boolean);
        if (refusal) return callback(refusal);
        callback(null, address, family);
      },
    );
  };
  return guarded as unknown as LookupFunction;
}

/**
 * The HTTPS agent for webhooks. request-filtering-agent checks the address actually connected to,
 * literal or resolved by DNS (so a name pointing at 127.0.0.1 or 169.254.169.254 is refused too,
 * and DNS rebinding cannot slip past a check made earlier). Anything that is not public unicast is
 * refused: loopback, private, link-local (cloud metadata), unique-local, unspecified, mapped ...
 * Before it, embeddedIpv4Refusal checks the IPv4 address inside IPv6 transition forms, on the same
 * two paths (the literal address, and each address a name resolves to).
 */
export async function guardedAgent({ allowedCidrs, ca }: AddressGuardOptions): Promise<RequestFilteringHttpsAgent> {
  const { RequestFilteringHttpsAgent } = await import('request-filtering-agent');
  class EmbeddedIpv4GuardAgent extends RequestFilteringHttpsAgent {
    override createConnection(
      options: Parameters<RequestFilteringHttpsAgent['createConnection']>[0],
      connectionListener?: (error: Error | null, socket: Duplex) => void,
    ): Duplex {
      const refusal = options.host === undefined ? undefined : embeddedIpv4Refusal(options.host, allowedCidrs);
      if (refusal) {
        // As request-filtering-agent reports its own refusals: a socket that fails with the reason.
        const socket = new Socket();
        if (connectionListener) connectionListener(refusal, socket);
        else socket.destroy(refusal);
        return socket;
      }
      const lookup = guardedLookup(options.lookup ?? (dns.lookup as LookupFunction), allowedCidrs);
      return super.createConnection({ ...options, lookup }, connectionListener);
    }
  }
  return new EmbeddedIpv4GuardAgent({
    allowPrivateIPAddress: false,
    allowMetaIPAddress: false,
    allowIPAddressList: [...allowedCidrs],
    // Each delivery is one request: no idle sockets kept towards receivers.
    keepAlive: false,
    ...(ca ? { ca } : {}),
  });
}

const REFUSED = /^DNS lookup (\S+?)\(.*is not allowed/;

/** The address the guard refused, when err is the guard's refusal (ours, or request-filtering-agent's). */
export function refusedAddress(err: unknown): string | undefined {
  if (err instanceof RefusedAddressError) return err.address;
  const message = err instanceof Error ? err.message : '';
  return REFUSED.exec(message)?.[1];
}
