import { describe, expect, it } from 'vitest';
import {
  findIdentifiers,
  identifierKinds,
  isDanishNationalId,
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

describe('Danish CPR numbers', () => {
  it('takes a real date in the century the first serial digit gives, and no checksum', () => {
    expect(isDanishNationalId('070761-4285')).toBe(true); // 7 July 1961
    // Fails modulus 11 (weighted sum 85), as numbers issued since 2007 may: still valid.
    expect(isDanishNationalId('010190-1235')).toBe(true);
    expect(isDanishNationalId('310461-1234')).toBe(false); // no 31 April
    expect(isDanishNationalId('001261-1234')).toBe(false); // no day 0
    // 29 February: serial 4 with year 00 is 2000 (a leap year); serial 0 makes it 1900 (not).
    expect(isDanishNationalId('290200-4000')).toBe(true);
    expect(isDanishNationalId('290200-0000')).toBe(false);
    // Serial 5-8 with year 58-99 is the 1800s: 29 February 1896 existed, 1897 did not.
    expect(isDanishNationalId('290296-5000')).toBe(true);
    expect(isDanishNationalId('290297-5000')).toBe(false);
    expect(isDanishNationalId('070761-428')).toBe(false);
  });

  it('is redacted in text as national_id_dk, and look-alikes with impossible dates are left', () => {
    const result = redactIdentifiers('CPR 070761-4285, ordre 310461-1234.', ['national_id_dk'], '[{kind}]');
    expect(result.text).toBe('CPR [national_id_dk], ordre 310461-1234.');
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
