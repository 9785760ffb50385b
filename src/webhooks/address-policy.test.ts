import { describe, expect, it } from 'vitest';
import { createAddressPolicy, literalHostRefusal } from './address-policy.js';

describe('webhook address policy', () => {
  const strict = createAddressPolicy([]);

  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.20.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    'fd00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    // 6to4 of 127.0.0.1, Teredo, site-local
    '2002:7f00:1::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    'fec0::1',
    // issue 17: IPv4-compatible loopback, local-use NAT64 of loopback, discard-only, documentation
    '::127.0.0.1',
    '::7f00:1',
    '64:ff9b:1::7f00:1',
    '64:ff9b::a9fe:a9fe',
    '100::1',
    '2001:db8::1',
  ])('refuses %s by default', (address) => {
    expect(strict.refusal(address)).toMatch(/WEIR_WEBHOOK_ALLOWED_CIDRS/);
  });

  it.each([
    '93.184.216.34',
    '2606:2800:220:1:248:1893:25c8:1946',
    '8.8.8.8',
  ])('accepts the public address %s', (address) => {
    expect(strict.refusal(address)).toBeUndefined();
  });

  it('lets an allow-list open chosen ranges only', () => {
    const policy = createAddressPolicy(['127.0.0.0/8', '10.5.0.0/16']);
    expect(policy.refusal('127.0.0.1')).toBeUndefined();
    expect(policy.refusal('10.5.9.9')).toBeUndefined();
    expect(policy.refusal('10.6.0.1')).toBeDefined();
    expect(policy.refusal('169.254.169.254')).toBeDefined();
    expect(() => createAddressPolicy(['not-a-cidr'])).toThrow('WEIR_WEBHOOK_ALLOWED_CIDRS');
  });

  it('does not let an IPv4 allow-list open IPv6 forms that merely embed the address', () => {
    const policy = createAddressPolicy(['127.0.0.1/32']);
    expect(policy.refusal('::ffff:127.0.0.1')).toBeUndefined();
    expect(policy.refusal('::127.0.0.1')).toMatch(/IPv4-compatible form of 127\.0\.0\.1/);
    expect(literalHostRefusal(new URL('http://[::127.0.0.1]:9/hook'), policy)).toBeDefined();
  });

  it('checks IP-literal URL hosts up front', () => {
    expect(literalHostRefusal(new URL('http://127.0.0.1:9/hook'), strict)).toBeDefined();
    expect(literalHostRefusal(new URL('http://[::1]:9/hook'), strict)).toBeDefined();
    expect(literalHostRefusal(new URL('http://example.test/hook'), strict)).toBeUndefined();
  });
});
