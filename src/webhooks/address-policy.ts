/**
 * SSRF guard for webhook targets: loopback, private, link-local (cloud metadata at
 * 169.254.169.254 included), carrier-grade NAT, multicast and reserved addresses are refused
 * unless WEIR_WEBHOOK_ALLOWED_CIDRS allow-lists them. The check runs on the address actually
 * connected to (a `lookup` for the HTTP agent), so a name that resolves to a private address
 * after registration (DNS rebinding) is refused too; IP-literal URLs are checked up front
 * because Node does not look them up.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import net from 'node:net';

const blockedIpv4: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const blockedIpv6: Array<[string, number]> = [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  // Teredo and 6to4 tunnel to IPv4 addresses embedded in the IPv6 one (any of them private).
  ['2001::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  // Site-local (deprecated, still routed inside some networks).
  ['fec0::', 10],
  ['ff00::', 8],
];

export interface AddressPolicy {
  /** Why the address may not be a webhook target, or undefined when it may. */
  refusal(address: string): string | undefined;
}

/** `allowedCidrs` like ["127.0.0.0/8", "::1/128"]; throws on a malformed entry. */
export function createAddressPolicy(allowedCidrs: readonly string[]): AddressPolicy {
  const blocked = new net.BlockList();
  for (const [address, prefix] of blockedIpv4) blocked.addSubnet(address, prefix, 'ipv4');
  for (const [address, prefix] of blockedIpv6) blocked.addSubnet(address, prefix, 'ipv6');
  const allowed = new net.BlockList();
  for (const cidr of allowedCidrs) {
    const [address = '', prefix] = cidr.trim().split('/');
    const family = net.isIP(address);
    if (family === 0 || prefix === undefined || !/^\d+$/.test(prefix)) {
      throw new Error(`WEIR_WEBHOOK_ALLOWED_CIDRS: ${JSON.stringify(cidr)} is not a CIDR such as 10.0.0.0/8`);
    }
    allowed.addSubnet(address, Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
  }
  return {
    refusal(address) {
      const candidate = unmapIpv4(address);
      const family = net.isIP(candidate);
      if (family === 0) return `${address} is not an IP address`;
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (allowed.check(candidate, type)) return undefined;
      if (blocked.check(candidate, type)) {
        return `${address} is a loopback, private, link-local or reserved address; allow it with WEIR_WEBHOOK_ALLOWED_CIDRS`;
      }
      return undefined;
    },
  };
}

/**
 * An IPv4-mapped IPv6 address (::ffff:127.0.0.1 or ::ffff:7f00:1) as its IPv4 address, so it
 * is judged by the IPv4 ranges; any other address unchanged.
 */
function unmapIpv4(address: string): string {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (dotted) return dotted;
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return address;
  const high = Number.parseInt(hex[1] as string, 16);
  const low = Number.parseInt(hex[2] as string, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** A dns.lookup replacement for http(s) agents that refuses forbidden resolved addresses. */
export function guardedLookup(policy: AddressPolicy): net.LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...(options as object), all: true } as LookupAllOptions, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as LookupAddress[];
      const refused = list.map((entry) => policy.refusal(entry.address)).find(Boolean);
      if (refused || list.length === 0) {
        const failure = Object.assign(
          new Error(`webhook target ${hostname} refused: ${refused ?? 'no address'}`),
          {
            code: 'EWEBHOOKTARGET',
          },
        );
        return callback(failure, '', 0);
      }
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const first = list[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
}

/** For an IP-literal URL host (which Node connects to without a lookup): why it is refused. */
export function literalHostRefusal(url: URL, policy: AddressPolicy): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return net.isIP(host) ? policy.refusal(host) : undefined;
}
