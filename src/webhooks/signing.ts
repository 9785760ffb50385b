/**
 * Signatures of webhook deliveries. Two schemes on every delivery, from one secret:
 * - `X-Svc-Signature: sha256=<hex HMAC-SHA256(secret, raw body)>` (spec 5), the scheme of
 *   GitHub-style verifiers such as @octokit/webhooks-methods;
 * - Standard Webhooks: `webhook-id`, `webhook-timestamp` (Unix seconds) and
 *   `webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, where the
 *   key is the secret's UTF-8 bytes, so off-the-shelf verifiers take the secret as
 *   `whsec_` + base64(secret).
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';

// Key objects by secret: a delivery signs twice with its subscription's secret, and a key
// object saves copying and preparing the key on every HMAC.
const keys = new Map<string, KeyObject>();
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= 1024) keys.clear();
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, key);
  }
  return key;
}

export function svcSignature(secret: string, rawBody: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', keyOf(secret)).update(rawBody).digest('hex')}`;
}

export function standardWebhookHeaders(
  secret: string,
  delivery: { id: string; timestamp: Date; rawBody: string | Uint8Array },
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const seconds = Math.floor(delivery.timestamp.getTime() / 1000);
  return {
    'webhook-id': delivery.id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': standardWebhookSignature(secret, delivery.id, seconds, delivery.rawBody),
  };
}

/** The `webhook-signature` header for a delivery id, a time in Unix seconds and a body. */
export function standardWebhookSignature(
  secret: string,
  id: string,
  seconds: number,
  rawBody: string | Uint8Array,
): string {
  const signature = createHmac('sha256', keyOf(secret))
    .update(`${id}.${seconds}.`)
    .update(rawBody)
    .digest('base64');
  return `v1,${signature}`;
}

/** The secret in the form Standard Webhooks verifiers take. */
export function standardWebhookSecret(secret: string): string {
  return `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;
}
