/**
 * What kind of address an outbound connection goes to, shared by every guard (webhook targets,
 * the MQ diagnostic, the web fetchers' egress policy). The ranges are ipaddr.js's special-purpose
 * ranges (IANA registries); added here are only what it has no name for: cloud metadata
 * endpoints, IPv4-compatible IPv6 (::a.b.c.d, deprecated) and IPv6 outside 2000::/3 (unassigned).
 *
 * IPv6 forms that carry an IPv4 address are unwrapped and the IPv4 address is judged as well:
 * IPv4-mapped (::ffff:a.b.c.d, the same host), IPv4-compatible (::a.b.c.d), IPv4-translated
 * (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48, last 32 bits),
 * 6to4 (2002:aabb:ccdd::/48) and Teredo (2001:0::/32, the client address inverted).
 */
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export type AddressClass =
  /** Globally routed unicast. */
  | 'global'
  /** RFC 1918, IPv6 unique-local fc00::/7, the deprecated site-local fec0::/10, local-use NAT64. */
  | 'private'
  /** 100.64.0.0/10, shared address space of carrier-grade NAT. */
  | 'carrier_grade_nat'
  | 'loopback'
  | 'link_local'
  /** Cloud instance metadata and platform endpoints (169.254.169.254, fd00:ec2::254, ...). */
  | 'metadata'
  /** 0.0.0.0/8 and ::, which Linux connects to the local host. */
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  /** Documentation, benchmarking, discard, Teredo, deprecated and unassigned ranges. */
  | 'reserved';

export type EmbeddingForm =
  | 'ipv4_mapped'
  | 'ipv4_compatible'
  | 'ipv4_translated'
  | 'nat64'
  | '6to4'
  | 'teredo';

export interface AddressClassification {
  /** The address in its canonical text form. */
  address: string;
  /** The class of the address itself. */
  class: AddressClass;
  /** The IPv4 address an IPv6 form carries, judged on its own. */
  embedded?: { form: EmbeddingForm; address: string; class: AddressClass };
}

/** Instance metadata and platform endpoints of the major clouds. */
const metadataAddresses = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OCI, OpenStack, DigitalOcean
  '169.254.170.2', // AWS ECS task metadata and credentials
  '169.254.170.23', // AWS EKS Pod Identity
  '100.100.100.200', // Alibaba Cloud
  '168.63.129.16', // Azure WireServer
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::23', // AWS EKS Pod Identity over IPv6
]);

const ipv4Classes: Record<string, AddressClass> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link_local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier_grade_nat',
  private: 'private',
  unicast: 'global',
};

const ipv6Classes: Record<string, AddressClass> = {
  unspecified: 'unspecified',
  linkLocal: 'link_local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'private',
  deprecatedSiteLocal: 'private',
};

const wellKnownNat64 = ipaddr.parseCIDR('64:ff9b::/96') as [ipaddr.IPv6, number];
const globalUnicast = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

function classifyIpv4(address: ipaddr.IPv4): AddressClass {
  if (metadataAddresses.has(address.toString())) return 'metadata';
  // Anything else ipaddr.js names (reserved, as112, amt) is special-purpose: 'reserved'.
  return ipv4Classes[address.range()] ?? 'reserved';
}

function ipv4FromParts(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);
}

function classifyIpv6(address: ipaddr.IPv6): AddressClassification {
  const text = address.toString();
  const parts = address.parts;
  const embed = (form: EmbeddingForm, ipv4: ipaddr.IPv4) => ({
    form,
    address: ipv4.toString(),
    class: classifyIpv4(ipv4),
  });
  const withEmbedded = (
    outer: AddressClass,
    form: EmbeddingForm,
    ipv4: ipaddr.IPv4,
  ): AddressClassification => ({
    address: text,
    class: outer,
    embedded: embed(form, ipv4),
  });
  const last32 = () => ipv4FromParts(parts[6] as number, parts[7] as number);
  if (metadataAddresses.has(text)) return { address: text, class: 'metadata' };
  const range = address.range();
  switch (range) {
    case 'ipv4Mapped': {
      // The same host as the IPv4 address: its class is the IPv4 one.
      const inner = embed('ipv4_mapped', address.toIPv4Address());
      return { address: text, class: inner.class, embedded: inner };
    }
    case 'rfc6145':
      return withEmbedded('reserved', 'ipv4_translated', last32());
    case 'rfc6052':
      // The well-known prefix reaches public IPv4 through a translator; the local-use
      // 64:ff9b:1::/48 is an operator's own translation prefix.
      return withEmbedded(address.match(wellKnownNat64) ? 'global' : 'private', 'nat64', last32());
    case '6to4':
      return withEmbedded('global', '6to4', ipv4FromParts(parts[1] as number, parts[2] as number));
    case 'teredo':
      return withEmbedded(
        'reserved',
        'teredo',
        ipv4FromParts((parts[6] as number) ^ 0xffff, (parts[7] as number) ^ 0xffff),
      );
    case 'unicast': {
      if (parts.slice(0, 6).every((part) => part === 0)) {
        // ::a.b.c.d (:: and ::1 have their own ranges): IPv4-compatible, deprecated by RFC 4291.
        return withEmbedded('reserved', 'ipv4_compatible', last32());
      }
      return { address: text, class: address.match(globalUnicast) ? 'global' : 'reserved' };
    }
    default:
      return { address: text, class: ipv6Classes[range] ?? 'reserved' };
  }
}

/**
 * Parses canonical IP text (net.isIP decides: ipaddr.js alone also takes "127.1" or
 * "0x7f.0.0.1" as IPv4). An IPv6 address ending in dotted IPv4 is rewritten to hex first:
 * ipaddr.js 2.5 reads "::127.0.0.1" as the IPv4-mapped ::ffff:7f00:1, another address.
 */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const family = net.isIP(text);
  if (family === 0) return undefined;
  if (family === 4) return ipaddr.IPv4.parse(text);
  const zoneAt = text.indexOf('%');
  const base = zoneAt >= 0 ? text.slice(0, zoneAt) : text;
  const zone = zoneAt >= 0 ? text.slice(zoneAt) : '';
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(base);
  if (!dotted) return ipaddr.IPv6.parse(text);
  const [a, b, c, d] = dotted.slice(2).map(Number) as [number, number, number, number];
  const hex = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  return ipaddr.IPv6.parse(`${dotted[1]}${hex}${zone}`);
}

/** The class of an IP address in text (IPv6 with or without brackets); undefined if not one. */
export function classifyAddress(text: string): AddressClassification | undefined {
  const parsed = parseAddress(text.replace(/^\[(.*)\]$/, '$1'));
  if (!parsed) return undefined;
  if (parsed.kind() === 'ipv4') {
    const ipv4 = parsed as ipaddr.IPv4;
    return { address: ipv4.toString(), class: classifyIpv4(ipv4) };
  }
  return classifyIpv6(parsed as ipaddr.IPv6);
}

/** A list of CIDRs an operator allows (a setting such as WEIR_WEBHOOK_ALLOWED_CIDRS). */
export interface CidrList {
  readonly entries: readonly string[];
  /**
   * Whether the address is inside one of the CIDRs. An IPv4-mapped address also matches the
   * IPv4 CIDRs of its IPv4 address (the same host); other embedded forms match only as IPv6.
   */
  contains(address: AddressClassification): boolean;
}

/** Parses `entries` like ["127.0.0.0/8", "::1/128"]; throws naming `setting` on a bad entry. */
export function parseCidrList(entries: readonly string[], setting: string): CidrList {
  const ranges = entries.map((entry) => {
    const [address = '', prefix, ...rest] = entry.trim().split('/');
    const network = parseAddress(address);
    const length = Number(prefix);
    if (!network || prefix === undefined || !/^\d{1,3}$/.test(prefix) || rest.length > 0) {
      throw new Error(`${setting}: ${JSON.stringify(entry)} is not a CIDR such as 10.0.0.0/8`);
    }
    if (length > (network.kind() === 'ipv4' ? 32 : 128)) {
      throw new Error(`${setting}: ${JSON.stringify(entry)} has a prefix length out of range`);
    }
    return [network, length] as const;
  });
  return {
    entries: [...entries],
    contains(classification) {
      const candidates = [parseAddress(classification.address) as ipaddr.IPv4 | ipaddr.IPv6];
      if (classification.embedded?.form === 'ipv4_mapped') {
        candidates.push(ipaddr.IPv4.parse(classification.embedded.address));
      }
      return ranges.some(([network, prefix]) =>
        candidates.some(
          (candidate) => candidate.kind() === network.kind() && candidate.match(network, prefix),
        ),
      );
    },
  };
}

const classNames: Record<AddressClass, string> = {
  global: 'a public address',
  private: 'a private address',
  carrier_grade_nat: 'a carrier-grade NAT address',
  loopback: 'a loopback address',
  link_local: 'a link-local address',
  metadata: 'a cloud metadata address',
  unspecified: 'an unspecified address (this host)',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved or special-purpose address',
};

const formNames: Record<EmbeddingForm, string> = {
  ipv4_mapped: 'IPv4-mapped',
  ipv4_compatible: 'IPv4-compatible',
  ipv4_translated: 'IPv4-translated',
  nat64: 'NAT64',
  '6to4': '6to4',
  teredo: 'Teredo',
};

/** In words, for refusals: "a loopback address", "a NAT64 form of 127.0.0.1 (a loopback address)". */
export function describeAddress(classification: AddressClassification): string {
  const { embedded } = classification;
  if (!embedded || embedded.form === 'ipv4_mapped') return classNames[classification.class];
  return `a ${formNames[embedded.form]} form of ${embedded.address} (${classNames[embedded.class]})`;
}

export interface AddressGuard {
  /** Why a connection to `address` is refused, or undefined when it may go ahead. */
  refusal(address: string): string | undefined;
}

/** Only public unicast: the default of webhook and mq-diagnostic targets. */
export const publicOnly: ReadonlySet<AddressClass> = new Set(['global']);

/**
 * Passes addresses whose own class and embedded IPv4 class are both `permitted`, and any
 * address inside `allowedCidrs` (the value of `setting`, which refusals name and malformed
 * entries are reported against).
 */
export function createAddressGuard(options: {
  permitted: ReadonlySet<AddressClass>;
  allowedCidrs: readonly string[];
  setting: string;
}): AddressGuard {
  const allowed = parseCidrList(options.allowedCidrs, options.setting);
  return {
    refusal(address) {
      const classification = classifyAddress(address);
      if (!classification) return `${address} is not an IP address`;
      if (allowed.contains(classification)) return undefined;
      const classes = [classification.class, classification.embedded?.class];
      if (classes.every((kind) => kind === undefined || options.permitted.has(kind))) return undefined;
      return `${address} is ${describeAddress(classification)}; allow it with ${options.setting}`;
    },
  };
}
