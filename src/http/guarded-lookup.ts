/**
 * Checks of a host against an AddressGuard before anything connects: for clear answers at
 * registration (webhook targets) and for the MQ diagnostic. HTTP connections are checked where
 * they are made, by the egress policy's connector (egress-policy.ts).
 */
import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookupAll } from 'node:dns/promises';
import { type AddressGuard, classifyAddress } from './address-classification.js';

/** The host of a URL without IPv6 brackets. */
export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** For an IP-literal URL host (which Node connects to without a lookup): why it is refused. */
export function literalHostRefusal(url: URL, guard: AddressGuard): string | undefined {
  const host = urlHost(url);
  return classifyAddress(host) ? guard.refusal(host) : undefined;
}

/** Resolves a host name to its addresses (dns.lookup with `all: true` by default). */
export type Resolver = (hostname: string) => Promise<readonly LookupAddress[]>;

const systemResolver: Resolver = (hostname) => dnsLookupAll(hostname, { all: true });

/**
 * Resolves `host` (a name or an IP literal; `resolve` is not asked for a literal) and checks
 * every address: the refusal, or the addresses. Lookup failures are thrown. The egress
 * policy's connector dials one of the returned addresses; elsewhere it is for a clear answer
 * before connecting.
 */
export async function resolveGuarded(
  host: string,
  guard: AddressGuard,
  resolve: Resolver = systemResolver,
): Promise<
  { refusal: string; addresses?: undefined } | { refusal?: undefined; addresses: readonly LookupAddress[] }
> {
  const bare = host.replace(/^\[|\]$/g, '');
  const addresses: readonly LookupAddress[] = classifyAddress(bare)
    ? [{ address: bare, family: bare.includes(':') ? 6 : 4 }]
    : await resolve(bare);
  if (addresses.length === 0) return { refusal: 'no address' };
  for (const entry of addresses) {
    const refusal = guard.refusal(entry.address);
    if (refusal) return { refusal };
  }
  return { addresses };
}
