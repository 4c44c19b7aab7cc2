import type { RequestFilteringHttpsAgent } from 'request-filtering-agent';

export interface AddressGuardOptions {
  /** CIDRs that may be reached although private or loopback (WEBHOOK_ALLOWED_CIDRS; local testing only). */
  allowedCidrs: readonly string[];
  /** Trusted CA certificates replacing Node's defaults (tests); production uses NODE_EXTRA_CA_CERTS. */
  ca?: string[];
}

/**
 * The HTTPS agent for webhooks. request-filtering-agent checks the address actually connected to,
 * literal or resolved by DNS (so a name pointing at 127.0.0.1 or 169.254.169.254 is refused too,
 * and DNS rebinding cannot slip past a check made earlier). Anything that is not public unicast is
 * refused: loopback, private, link-local (cloud metadata), unique-local, unspecified, mapped ...
 */
export async function guardedAgent({ allowedCidrs, ca }: AddressGuardOptions): Promise<RequestFilteringHttpsAgent> {
  const { RequestFilteringHttpsAgent } = await import('request-filtering-agent');
  return new RequestFilteringHttpsAgent({
    allowPrivateIPAddress: false,
    allowMetaIPAddress: false,
    allowIPAddressList: [...allowedCidrs],
    // Each delivery is one request: no idle sockets kept towards receivers.
    keepAlive: false,
    ...(ca ? { ca } : {}),
  });
}

const REFUSED = /^DNS lookup (\S+?)\(.*is not allowed/;

/** The address the guard refused, when err is the guard's refusal. */
export function refusedAddress(err: unknown): string | undefined {
  const message = err instanceof Error ? err.message : '';
  return REFUSED.exec(message)?.[1];
}
