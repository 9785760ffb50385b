import { describe, expect, it } from 'vitest';
import {
  findIdentifiers,
  identifierKinds,
  isFinnishNationalId,
  isIban,
  isNorwegianNationalId,
  isPaymentCard,
  isSwedishNationalId,
  redactIdentifiers,
} from './identifiers.js';

describe('identifier checksums', () => {
  it('accepts valid and refuses altered identifiers', () => {
    // Published test numbers (synthetic persons) and the standard IBAN examples.
    expect(isNorwegianNationalId('01010750160')).toBe(true);
    expect(isNorwegianNationalId('01010750161')).toBe(false);
    expect(isNorwegianNationalId('32010750160')).toBe(false); // no 32nd day
    expect(isSwedishNationalId('811218-9876')).toBe(true);
    expect(isSwedishNationalId('811218-9875')).toBe(false);
    expect(isFinnishNationalId('131052-308T')).toBe(true);
    expect(isFinnishNationalId('131052-308U')).toBe(false);
    expect(isIban('NO93 8601 1117 947')).toBe(true);
    expect(isIban('GB82 WEST 1234 5698 7654 32')).toBe(true);
    expect(isIban('GB82 WEST 1234 5698 7654 33')).toBe(false);
    expect(isPaymentCard('4111 1111 1111 1111')).toBe(true);
    expect(isPaymentCard('4111 1111 1111 1112')).toBe(false);
  });
});

describe('redactIdentifiers', () => {
  it('replaces every valid identifier and counts them by kind', () => {
    const text =
      'Kunde 01010750160 betalte fra NO93 8601 1117 947 med kort 4111-1111-1111-1111; svar til ola.nordmann@example.no.';
    const result = redactIdentifiers(text, identifierKinds, '[{kind}]');
    expect(result.text).toBe(
      'Kunde [national_id_no] betalte fra [iban] med kort [payment_card]; svar til [email].',
    );
    expect(result.counts).toEqual({ national_id_no: 1, iban: 1, payment_card: 1, email: 1 });
  });

  it('leaves numbers that only look like identifiers', () => {
    const text = 'Order 12345678901 shipped 2024-01-01; invoice 4111 1111 1111 1112; version 1.2.3.';
    expect(findIdentifiers(text, identifierKinds)).toEqual([]);
  });

  it('redacts only the kinds asked for', () => {
    const result = redactIdentifiers('mail a@b.no, id 01010750160', ['email'], 'X');
    expect(result.text).toBe('mail X, id 01010750160');
  });
});
