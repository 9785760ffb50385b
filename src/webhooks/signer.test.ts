import { describe, expect, it } from 'vitest';
import { createSigner } from './signer.js';
import { standardWebhookSignature, svcSignature } from './signing.js';

describe('signing thread', () => {
  it('signs a batch both ways exactly as the service thread does, per secret', async () => {
    const signer = createSigner((error) => {
      throw error;
    });
    const deliveries = Array.from({ length: 40 }, (_, index) => ({
      delivery_id: `0190a5c4-8f3e-7b2a-9c1d-${String(index).padStart(12, '0')}`,
      secret: index % 3 === 0 ? 'first-secret-0123456789' : 'second-secret-0123456789',
      body: Buffer.from(JSON.stringify({ id: index, text: 'ünïcode ✓', empty: '' })),
    }));
    const seconds = 1_900_000_000;
    const signatures = await signer.sign(deliveries, seconds);
    signer.close();
    expect(signatures).toHaveLength(40);
    deliveries.forEach((delivery, index) => {
      expect(signatures?.[index]).toEqual({
        svc: svcSignature(delivery.secret, delivery.body),
        standard: standardWebhookSignature(delivery.secret, delivery.delivery_id, seconds, delivery.body),
        seconds,
        secret: delivery.secret,
      });
    });
  });

  it('starts a new thread for a batch after close, and answers a batch cut off by close with undefined', async () => {
    const signer = createSigner((error) => {
      throw error;
    });
    const body = Buffer.from('{}');
    const delivery = { delivery_id: 'd', secret: 'secret-0123456789abcdef', body };
    const cutOff = signer.sign([delivery], 1);
    signer.close();
    expect(await cutOff).toBeUndefined();
    const again = await signer.sign([delivery], 1);
    signer.close();
    expect(again?.[0]?.svc).toBe(svcSignature(delivery.secret, body));
  });

  it('tells the secret a delivery was signed with, though its secret changed while the thread signed', async () => {
    const signer = createSigner((error) => {
      throw error;
    });
    const body = Buffer.from('{"id":"e"}');
    const delivery = { delivery_id: 'd', secret: 'old-secret-0123456789', body };
    const signing = signer.sign([delivery], 1);
    // Its subscription's secret was rotated (the launcher writes the new one on the delivery).
    delivery.secret = 'new-secret-0123456789';
    const [signed] = (await signing) ?? [];
    signer.close();
    expect(signed?.secret).toBe('old-secret-0123456789');
    expect(signed?.svc).toBe(svcSignature('old-secret-0123456789', body));
  });
});
