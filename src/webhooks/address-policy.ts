/**
 * SSRF guard for webhook targets: only public unicast addresses pass; loopback, private,
 * link-local, cloud metadata, carrier-grade NAT, multicast, reserved and unassigned addresses,
 * and IPv6 forms carrying such an IPv4 address, are refused unless WEIR_WEBHOOK_ALLOWED_CIDRS
 * allow-lists them. The classification is the shared one (src/http/address-classification.ts).
 * The check runs on the address actually connected to (the sender's egress policy, see
 * src/http/egress-policy.ts), so a name that resolves to a private address after registration
 * (DNS rebinding) is refused too, and so is an IP-literal host.
 */
import { type AddressGuard, createAddressGuard, publicOnly } from '../http/address-classification.js';
import { literalHostRefusal } from '../http/guarded-lookup.js';

export type AddressPolicy = AddressGuard;

export const WEBHOOK_ALLOW_SETTING = 'WEIR_WEBHOOK_ALLOWED_CIDRS';
/** The `code` of a delivery the policy refused when connecting. */
export const WEBHOOK_TARGET_REFUSED = 'EWEBHOOKTARGET';

/** `allowedCidrs` like ["127.0.0.0/8", "::1/128"]; throws on a malformed entry. */
export function createAddressPolicy(allowedCidrs: readonly string[]): AddressPolicy {
  return createAddressGuard({ permitted: publicOnly, allowedCidrs, setting: WEBHOOK_ALLOW_SETTING });
}

export { literalHostRefusal };
