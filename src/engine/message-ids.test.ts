import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { documentIdFor } from '../search-index/ids.js';
import { deriveMessageId } from './message-ids.js';

describe('deriveMessageId', () => {
  // Values of the first implementation (a Hash object and a Buffer per id): a data dir written
  // before must get the same ids for the same outputs after an upgrade, or a parent run again
  // after a crash would queue its outputs twice.
  it('gives the ids it always gave', () => {
    const parent = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
    expect(deriveMessageId(parent, 0)).toBe('516652fc-79b6-88ce-8428-bebe818a6435');
    expect(deriveMessageId(parent, 99_999)).toBe('2bc30e91-a76d-88c8-afef-f810bf0f432c');
    expect(deriveMessageId('init', 7)).toBe('73e4674a-cbab-8e17-a729-de25438cc167');
    // The search index's document and segment ids share the derivation (sha256-uuid.ts).
    expect(documentIdFor('https://example.com/a')).toBe('22ec0a44-89fd-8cb5-91af-ab85697528d9');
  });

  it('sets version 8 and the RFC variant over the first 16 bytes of SHA-256', () => {
    for (let index = 0; index < 2000; index++) {
      const bytes = createHash('sha256').update(`parent:${index}`).digest().subarray(0, 16);
      bytes[6] = ((bytes[6] as number) & 0x0f) | 0x80;
      bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
      expect(deriveMessageId('parent', index).replaceAll('-', '')).toBe(bytes.toString('hex'));
    }
  });
});
