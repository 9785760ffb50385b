import { verify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { standardWebhookHeaders, standardWebhookSecret, svcSignature } from './signing.js';

const secret = 'a shared secret: with punctuation & ünïcode';
const body = JSON.stringify({ type: 'execution.completed', data: { execution_id: 'e' } });

describe('webhook signing, checked by independent verifiers', () => {
  it('X-Svc-Signature verifies with @octokit/webhooks-methods', async () => {
    const header = svcSignature(secret, body);
    expect(header).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(await verify(secret, body, header)).toBe(true);
    expect(await verify(secret, `${body} `, header)).toBe(false);
    expect(await verify('another secret', body, header)).toBe(false);
  });

  it('Standard Webhooks headers verify with the standardwebhooks package', () => {
    const headers = standardWebhookHeaders(secret, { id: 'msg_01', timestamp: new Date(), rawBody: body });
    const verifier = new Webhook(standardWebhookSecret(secret));
    expect(verifier.verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => verifier.verify(body.replace('completed', 'failed'), headers)).toThrow();
    const stale = standardWebhookHeaders(secret, {
      id: 'msg_02',
      timestamp: new Date(Date.now() - 3_600_000),
      rawBody: body,
    });
    expect(() => verifier.verify(body, stale)).toThrow(); // replay protection of the verifier
  });
});
