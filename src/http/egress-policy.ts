/**
 * Where the web fetchers may connect. Intranet crawling is their job, so public and private
 * addresses (RFC 1918, IPv6 unique-local, carrier-grade NAT) pass; loopback, link-local, cloud
 * metadata, unspecified, multicast, broadcast and reserved addresses (and IPv6 forms carrying
 * such an IPv4 address) are refused unless WEIR_FETCH_ALLOWED_CIDRS lists them.
 *
 * The check runs at connect time: the undici dispatcher resolves the host with a guarded
 * lookup and connects only to checked addresses, on every request and so on every redirect
 * hop; IP-literal hosts (which are connected to without a lookup) are checked by `refusal`
 * before the request.
 */
import { Agent, type Dispatcher } from 'undici';
import { type AddressClass, type AddressGuard, createAddressGuard } from './address-classification.js';
import { guardedLookup, literalHostRefusal, resolveGuarded, urlHost } from './guarded-lookup.js';

export const FETCH_ALLOW_SETTING = 'WEIR_FETCH_ALLOWED_CIDRS';
/** The `code` of a connection the policy refused. */
export const EGRESS_REFUSED = 'EEGRESSREFUSED';

const permitted: ReadonlySet<AddressClass> = new Set(['global', 'private', 'carrier_grade_nat']);

export interface EgressPolicy {
  readonly allowedCidrs: readonly string[];
  readonly guard: AddressGuard;
  /** For undici's fetch: connections through it are checked at connect time. */
  readonly dispatcher: Dispatcher;
  /** Why a URL with an IP-literal host is refused (names are checked when connecting). */
  refusal(url: URL): string | undefined;
  /**
   * Resolves the URL's host and checks every address: why it is refused, if it is. For
   * connections this process does not make itself (Chromium's), which resolve again.
   */
  check(url: URL): Promise<string | undefined>;
}

const policies = new Map<string, EgressPolicy>();

/**
 * The policy for an allow-list (e.g. settings.fetch_allowed_cidrs); one per distinct list, so
 * adapter instances share its connection pool. Throws on a malformed CIDR.
 */
export function egressPolicy(allowedCidrs: readonly string[]): EgressPolicy {
  const key = allowedCidrs.map((entry) => entry.trim()).join(',');
  const known = policies.get(key);
  if (known) return known;
  const guard = createAddressGuard({
    permitted,
    allowedCidrs,
    setting: FETCH_ALLOW_SETTING,
  });
  const policy: EgressPolicy = {
    allowedCidrs: [...allowedCidrs],
    guard,
    dispatcher: new Agent({
      connect: {
        lookup: guardedLookup(guard, { label: 'fetch from', code: EGRESS_REFUSED }),
      } as Agent.Options['connect'],
    }),
    refusal(url) {
      const refused = literalHostRefusal(url, guard);
      return refused ? `fetch from ${url.hostname} refused: ${refused}` : undefined;
    },
    async check(url) {
      if (
        url.protocol !== 'http:' &&
        url.protocol !== 'https:' &&
        url.protocol !== 'ws:' &&
        url.protocol !== 'wss:'
      )
        return undefined;
      try {
        const checked = await resolveGuarded(urlHost(url), guard);
        return checked.refusal === undefined
          ? undefined
          : `fetch from ${url.hostname} refused: ${checked.refusal}`;
      } catch {
        return undefined; // does not resolve: the connection fails on its own
      }
    },
  };
  policies.set(key, policy);
  return policy;
}
