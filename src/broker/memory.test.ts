import { describe, expect, it } from 'vitest';
import { describeBrokerConformance } from './broker.conformance.js';
import { createMemoryBroker } from './memory.js';

describeBrokerConformance('in-process', async () => createMemoryBroker());

describe('in-process broker', () => {
  it('refuses to publish once closed', async () => {
    const broker = createMemoryBroker();
    await broker.close();
    await expect(broker.publish('q', new Uint8Array())).rejects.toThrow('closed');
    await expect(broker.check()).rejects.toThrow();
  });
});
