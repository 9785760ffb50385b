import { describe, expect, it } from 'vitest';
import { classifyAddress, createAddressGuard, parseCidrList } from './address-classification.js';

describe('address classification', () => {
  it.each([
    ['8.8.8.8', 'global'],
    ['2606:4700::1111', 'global'],
    ['10.1.2.3', 'private'],
    ['192.168.0.1', 'private'],
    ['fd12::1', 'private'],
    ['fec0::1', 'private'],
    ['100.64.0.1', 'carrier_grade_nat'],
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['169.254.1.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['169.254.169.254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['100::1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2001:2::1', 'reserved'],
    ['4000::1', 'reserved'],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)?.class).toBe(expected);
  });

  it.each([
    ['::ffff:127.0.0.1', 'ipv4_mapped', '127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'ipv4_mapped', '127.0.0.1', 'loopback'],
    ['::127.0.0.1', 'ipv4_compatible', '127.0.0.1', 'loopback'],
    ['::7f00:1', 'ipv4_compatible', '127.0.0.1', 'loopback'],
    ['::ffff:0:a9fe:a9fe', 'ipv4_translated', '169.254.169.254', 'metadata'],
    ['64:ff9b::7f00:1', 'nat64', '127.0.0.1', 'loopback'],
    ['64:ff9b::8.8.8.8', 'nat64', '8.8.8.8', 'global'],
    ['64:ff9b:1::7f00:1', 'nat64', '127.0.0.1', 'loopback'],
    ['2002:7f00:1::1', '6to4', '127.0.0.1', 'loopback'],
    ['2002:a9fe:a9fe::1', '6to4', '169.254.169.254', 'metadata'],
    // Teredo: the client address is the last 32 bits inverted (127.0.0.1 -> 80ff:fffe).
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'teredo', '127.0.0.1', 'loopback'],
  ])('unwraps %s (%s of %s, %s)', (address, form, ipv4, kind) => {
    expect(classifyAddress(address)?.embedded).toEqual({ form, address: ipv4, class: kind });
  });

  it('classifies the outer IPv6 forms', () => {
    expect(classifyAddress('::ffff:127.0.0.1')?.class).toBe('loopback');
    expect(classifyAddress('::7f00:1')?.class).toBe('reserved');
    expect(classifyAddress('64:ff9b::8.8.8.8')?.class).toBe('global');
    expect(classifyAddress('64:ff9b:1::8.8.8.8')?.class).toBe('private');
    expect(classifyAddress('2002:808:808::1')?.class).toBe('global');
    expect(classifyAddress('2001:0:4136:e378:8000:63bf:3fff:fdd2')?.class).toBe('reserved');
  });

  it('takes only canonical IP text', () => {
    for (const text of ['127.1', '0x7f.0.0.1', '2130706433', 'localhost', '', '::ffff:1.2.3', '1.2.3.4/8'])
      expect(classifyAddress(text)).toBeUndefined();
  });
});

describe('address guard', () => {
  const strict = createAddressGuard({
    permitted: new Set(['global']),
    allowedCidrs: [],
    setting: 'WEIR_TEST_CIDRS',
  });

  it.each([
    '::127.0.0.1',
    '64:ff9b:1::7f00:1',
    '64:ff9b::7f00:1',
    '100::1',
    '2001:db8::1',
    '::ffff:0:7f00:1',
  ])('refuses %s when only public addresses pass', (address) => {
    expect(strict.refusal(address)).toMatch(/allow it with WEIR_TEST_CIDRS/);
  });

  it('passes public addresses, also behind NAT64 and 6to4', () => {
    expect(strict.refusal('8.8.8.8')).toBeUndefined();
    expect(strict.refusal('64:ff9b::8.8.8.8')).toBeUndefined();
    expect(strict.refusal('2002:808:808::1')).toBeUndefined();
  });

  it('names the embedded address in a refusal', () => {
    expect(strict.refusal('64:ff9b::7f00:1')).toContain('a NAT64 form of 127.0.0.1 (a loopback address)');
  });

  it('lets an IPv4 allow-list open IPv4-mapped forms of the same host only', () => {
    const guard = createAddressGuard({
      permitted: new Set(['global']),
      allowedCidrs: ['127.0.0.1/32'],
      setting: 'X',
    });
    expect(guard.refusal('127.0.0.1')).toBeUndefined();
    expect(guard.refusal('::ffff:127.0.0.1')).toBeUndefined();
    // Other forms are other addresses (tunnels, translators): allow-list them as IPv6.
    expect(guard.refusal('::127.0.0.1')).toBeDefined();
    expect(guard.refusal('64:ff9b:1::7f00:1')).toBeDefined();
    expect(guard.refusal('127.0.0.2')).toBeDefined();
  });

  it('refuses malformed allow-list entries', () => {
    for (const entry of ['10.0.0.0', 'ten/8', '10.0.0.0/33', '::1/129', '10.1/8', '10.0.0.0/8/8'])
      expect(() => parseCidrList([entry], 'WEIR_X')).toThrow('WEIR_X');
    expect(parseCidrList([' 10.0.0.0/8 ', '::1/128'], 'WEIR_X').entries).toHaveLength(2);
  });
});
