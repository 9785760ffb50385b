/**
 * SSRF guard for webhook targets: only public unicast addresses pass; loopback, private,
 * link-local, cloud metadata, carrier-grade NAT, multicast, reserved and unassigned addresses,
 * and IPv6 forms carrying such an IPv4 address, are refused unless WEIR_WEBHOOK_ALLOWED_CIDRS
 * allow-lists them. The classification is the shared one (src/http/address-classification.ts).
 * The check runs on the address actually connected to (a `lookup` for the HTTP agent), so a
 * name that resolves to a private address after registration (DNS rebinding) is refused too;
 * IP-literal URLs are checked up front because Node does not look them up.
 */
import type net from 'node:net';
import { type AddressGuard, createAddressGuard, publicOnly } from '../http/address-classification.js';
import { guardedLookup as guardedLookupWith, literalHostRefusal } from '../http/guarded-lookup.js';

export type AddressPolicy = AddressGuard;

export const WEBHOOK_ALLOW_SETTING = 'WEIR_WEBHOOK_ALLOWED_CIDRS';

/** `allowedCidrs` like ["127.0.0.0/8", "::1/128"]; throws on a malformed entry. */
export function createAddressPolicy(allowedCidrs: readonly string[]): AddressPolicy {
  return createAddressGuard({ permitted: publicOnly, allowedCidrs, setting: WEBHOOK_ALLOW_SETTING });
}

/** A dns.lookup replacement for http(s) agents that refuses forbidden resolved addresses. */
export function guardedLookup(policy: AddressPolicy): net.LookupFunction {
  return guardedLookupWith(policy, { label: 'webhook target', code: 'EWEBHOOKTARGET' });
}

export { literalHostRefusal };
