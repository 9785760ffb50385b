/**
 * Applying an AddressGuard where connections are made. A `lookup` for net/tls/http agents and
 * undici's `connect` option checks every address a name resolves to just before connecting,
 * so a name re-pointed after an earlier check (DNS rebinding) is refused as well. IP-literal
 * hosts are connected to without a lookup, so they are checked up front (literalHostRefusal).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { lookup as dnsLookupAll } from 'node:dns/promises';
import type net from 'node:net';
import { type AddressGuard, classifyAddress } from './address-classification.js';

/** An error a guarded connection fails with; `code` tells it from network errors. */
export interface RefusedConnection extends Error {
  code: string;
}

/**
 * A dns.lookup replacement that refuses a name when any address it resolves to is refused.
 * The error says `<label> <hostname> refused: <why>` and carries `code`.
 */
export function guardedLookup(
  guard: AddressGuard,
  options: { label: string; code: string },
): net.LookupFunction {
  return (hostname, lookupOptions, callback) => {
    dnsLookup(
      hostname,
      { ...(lookupOptions as object), all: true } as LookupAllOptions,
      (error, addresses) => {
        if (error) return callback(error, '', 0);
        const list = addresses as LookupAddress[];
        const refused = list.map((entry) => guard.refusal(entry.address)).find(Boolean);
        if (refused || list.length === 0) {
          const failure: RefusedConnection = Object.assign(
            new Error(`${options.label} ${hostname} refused: ${refused ?? 'no address'}`),
            { code: options.code },
          );
          return callback(failure, '', 0);
        }
        if ((lookupOptions as { all?: boolean }).all)
          return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
        const first = list[0] as LookupAddress;
        return callback(null, first.address, first.family);
      },
    );
  };
}

/** The host of a URL without IPv6 brackets. */
export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** For an IP-literal URL host (which Node connects to without a lookup): why it is refused. */
export function literalHostRefusal(url: URL, guard: AddressGuard): string | undefined {
  const host = urlHost(url);
  return classifyAddress(host) ? guard.refusal(host) : undefined;
}

/**
 * Resolves `host` (a name or an IP literal) and checks every address: the refusal, or the
 * addresses. Lookup failures are thrown. For a clear answer before connecting; the connection
 * itself should still go through guardedLookup or connect to one of the returned addresses.
 */
export async function resolveGuarded(
  host: string,
  guard: AddressGuard,
): Promise<{ refusal: string; addresses?: undefined } | { refusal?: undefined; addresses: LookupAddress[] }> {
  const bare = host.replace(/^\[|\]$/g, '');
  const literal = classifyAddress(bare);
  const addresses = literal
    ? [{ address: bare, family: bare.includes(':') ? 6 : 4 }]
    : await dnsLookupAll(bare, { all: true });
  for (const entry of addresses) {
    const refusal = guard.refusal(entry.address);
    if (refusal) return { refusal };
  }
  return { addresses };
}
