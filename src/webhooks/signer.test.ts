import { describe, expect, it } from 'vitest';
import { createSigner } from './signer.js';
import { standardWebhookSignature, svcSignature } from './signing.js';

describe('signing thread', () => {
  it('signs a batch both ways exactly as the service thread does, per secret', async () => {
    const signer = createSigner((error) => {
      throw error;
    });
    const deliveries = Array.from({ length: 40 }, (_, index) => ({
      deliveryId: `0190a5c4-8f3e-7b2a-9c1d-${String(index).padStart(12, '0')}`,
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
        standard: standardWebhookSignature(delivery.secret, delivery.deliveryId, seconds, delivery.body),
        seconds,
        secret: delivery.secret,
      });
    });
  });

  it('answers undefined once closed, so the caller signs itself', async () => {
    const signer = createSigner();
    signer.close();
    const body = Buffer.from('{}');
    expect(
      await signer.sign([{ deliveryId: 'd', secret: 'secret-0123456789abcdef', body }], 1),
    ).toBeUndefined();
  });
});
