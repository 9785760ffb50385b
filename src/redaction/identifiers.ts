/**
 * Detectors for structured personal identifiers. Each finds candidates with a pattern and
 * keeps only those whose checksum or structure is valid, so invoice numbers and timestamps
 * that merely look like an identifier are left alone.
 */

export const identifierKinds = [
  'national_id_no',
  'national_id_se',
  'national_id_dk',
  'national_id_fi',
  'iban',
  'payment_card',
  'email',
] as const;

export type IdentifierKind = (typeof identifierKinds)[number];

export interface IdentifierMatch {
  kind: IdentifierKind;
  start: number;
  end: number;
}

interface Detector {
  pattern: RegExp;
  valid: (match: string) => boolean;
}

const digitsOf = (text: string) => text.replace(/\D/g, '');

/** Norwegian fødselsnummer and D-number: 11 digits, a real date, two mod-11 check digits. */
export function isNorwegianNationalId(text: string): boolean {
  const digits = digitsOf(text);
  if (digits.length !== 11) return false;
  const d = [...digits].map(Number);
  let day = (d[0] as number) * 10 + (d[1] as number);
  const month = (d[2] as number) * 10 + (d[3] as number);
  if (day > 40) day -= 40; // D-number
  if (day < 1 || day > 31 || month < 1 || month > 12) return false;
  const check = (weights: number[]) => {
    const sum = weights.reduce((total, weight, index) => total + weight * (d[index] as number), 0);
    const rest = 11 - (sum % 11);
    return rest === 11 ? 0 : rest;
  };
  const k1 = check([3, 7, 6, 1, 8, 9, 4, 5, 2]);
  if (k1 === 10 || k1 !== d[9]) return false;
  const k2 = check([5, 4, 3, 2, 7, 6, 5, 4, 3, 2]);
  return k2 !== 10 && k2 === d[10];
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let value = Number(digits[digits.length - 1 - index]);
    if (index % 2 === 1) {
      value *= 2;
      if (value > 9) value -= 9;
    }
    sum += value;
  }
  return sum % 10 === 0;
}

function validDate(day: number, month: number): boolean {
  return day >= 1 && day <= 31 && month >= 1 && month <= 12;
}

/** Swedish personnummer / samordningsnummer: (YY)YYMMDD-NNNC with a Luhn check over 10 digits. */
export function isSwedishNationalId(text: string): boolean {
  const digits = digitsOf(text);
  const ten = digits.length === 12 ? digits.slice(2) : digits;
  if (ten.length !== 10) return false;
  let day = Number(ten.slice(4, 6));
  if (day > 60) day -= 60; // samordningsnummer
  return validDate(day, Number(ten.slice(2, 4))) && luhn(ten);
}

/**
 * Danish CPR: DDMMYY-SSSS whose date is a real calendar day in the century that the first
 * serial digit gives with the year (the CPR office's rule), leap years included. There is no
 * checksum to test: numbers issued since 2007 need not pass modulus 11, so none is applied.
 */
export function isDanishNationalId(text: string): boolean {
  const digits = digitsOf(text);
  if (digits.length !== 10) return false;
  const day = Number(digits.slice(0, 2));
  const month = Number(digits.slice(2, 4));
  const year = Number(digits.slice(4, 6));
  const serial = Number(digits[6]);
  let century = 1900;
  if ((serial === 4 || serial === 9) && year <= 36) century = 2000;
  else if (serial >= 5 && serial <= 8) century = year <= 57 ? 2000 : 1800;
  const date = new Date(Date.UTC(century + year, month - 1, day));
  return (
    date.getUTCFullYear() === century + year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  );
}

/** Finnish henkilötunnus: DDMMYY, century sign, NNN, mod-31 check character. */
export function isFinnishNationalId(text: string): boolean {
  const match = /^(\d{6})[-+A-FU-Y](\d{3})([0-9A-Y])$/.exec(text);
  if (!match) return false;
  const [, date, individual, check] = match as unknown as [string, string, string, string];
  if (!validDate(Number(date.slice(0, 2)), Number(date.slice(2, 4)))) return false;
  return '0123456789ABCDEFHJKLMNPRSTUVWXY'[Number(date + individual) % 31] === check;
}

/** IBAN: country, two check digits, BBAN; mod 97 of the rearranged number is 1. */
export function isIban(text: string): boolean {
  const compact = text.replace(/\s/g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(compact)) return false;
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (const character of rearranged) {
    const value = character >= 'A' ? String(character.charCodeAt(0) - 55) : character;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

export function isPaymentCard(text: string): boolean {
  const digits = digitsOf(text);
  return digits.length >= 13 && digits.length <= 19 && luhn(digits);
}

const detectors: Record<IdentifierKind, Detector> = {
  national_id_no: { pattern: /(?<![\d-])\d{6}[ ]?\d{5}(?![\d-])/g, valid: isNorwegianNationalId },
  national_id_se: { pattern: /(?<![\d-])(?:\d{2})?\d{6}[-+]\d{4}(?![\d-])/g, valid: isSwedishNationalId },
  national_id_dk: { pattern: /(?<![\d-])\d{6}-\d{4}(?![\d-])/g, valid: isDanishNationalId },
  national_id_fi: { pattern: /(?<![\w-])\d{6}[-+A-FU-Y]\d{3}[0-9A-Y](?![\w-])/g, valid: isFinnishNationalId },
  iban: { pattern: /\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?\b/g, valid: isIban },
  payment_card: { pattern: /(?<![\d-])\d{4}(?:[ -]?\d{4}){2}[ -]?\d{1,7}(?![\d-])/g, valid: isPaymentCard },
  email: { pattern: /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}.-]+\.\p{L}{2,}/gu, valid: () => true },
};

/** Every valid identifier of the given kinds in `text`, earliest first, overlaps removed. */
export function findIdentifiers(text: string, kinds: readonly IdentifierKind[]): IdentifierMatch[] {
  const matches: IdentifierMatch[] = [];
  for (const kind of kinds) {
    const { pattern, valid } = detectors[kind];
    for (const match of text.matchAll(pattern)) {
      if (valid(match[0])) matches.push({ kind, start: match.index, end: match.index + match[0].length });
    }
  }
  matches.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: IdentifierMatch[] = [];
  for (const match of matches) {
    const last = kept[kept.length - 1];
    if (!last || match.start >= last.end) kept.push(match);
  }
  return kept;
}

/** `text` with each identifier replaced by `replacement` (`{kind}` is filled in), and counts per kind. */
export function redactIdentifiers(
  text: string,
  kinds: readonly IdentifierKind[],
  replacement: string,
): { text: string; counts: Partial<Record<IdentifierKind, number>> } {
  const matches = findIdentifiers(text, kinds);
  if (matches.length === 0) return { text, counts: {} };
  const counts: Partial<Record<IdentifierKind, number>> = {};
  let result = '';
  let position = 0;
  for (const match of matches) {
    result += text.slice(position, match.start) + replacement.replaceAll('{kind}', match.kind);
    position = match.end;
    counts[match.kind] = (counts[match.kind] ?? 0) + 1;
  }
  return { text: result + text.slice(position), counts };
}
