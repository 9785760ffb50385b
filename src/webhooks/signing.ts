/**
 * Signatures of webhook deliveries. Two schemes on every delivery, from one secret:
 * - `X-Svc-Signature: sha256=<hex HMAC-SHA256(secret, raw body)>` (spec 5), the scheme of
 *   GitHub-style verifiers such as @octokit/webhooks-methods;
 * - Standard Webhooks: `webhook-id`, `webhook-timestamp` (Unix seconds) and
 *   `webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, where the
 *   key is the secret's UTF-8 bytes, so off-the-shelf verifiers take the secret as
 *   `whsec_` + base64(secret).
 */
import { createHmac } from 'node:crypto';

export function svcSignature(secret: string, rawBody: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

export function standardWebhookHeaders(
  secret: string,
  delivery: { id: string; timestamp: Date; rawBody: string },
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const seconds = Math.floor(delivery.timestamp.getTime() / 1000);
  const signed = `${delivery.id}.${seconds}.${delivery.rawBody}`;
  const signature = createHmac('sha256', Buffer.from(secret, 'utf8')).update(signed).digest('base64');
  return {
    'webhook-id': delivery.id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': `v1,${signature}`,
  };
}

/** The secret in the form Standard Webhooks verifiers take. */
export function standardWebhookSecret(secret: string): string {
  return `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;
}
