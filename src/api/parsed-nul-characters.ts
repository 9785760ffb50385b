/**
 * NUL characters in content the service parses out of a request's text. The check of the
 * request as sent (nul-characters.ts, request-validation.ts) sees a config's YAML as one string:
 * a YAML escape (`"a\0b"`, `"\x00"`, `"\u0000"`) makes a NUL only once the YAML is parsed, and
 * PostgreSQL cannot store one (a name, a description, an init payload: a 500). Every place that
 * parses user text on its way to the database calls `refuseParsedNulCharacters` on the result.
 */
import { AppError } from '../errors.js';
import { findNulCharacters } from './nul-characters.js';
import { toValidationErrors } from './validation-errors.js';

/** Findings listed at most, as many as a 422 shows. */
const MAX_FINDINGS = 20;

/**
 * Throws a 422 (`request_invalid`, entries of type `string_nul`) when any string or key of
 * `value` holds a NUL. `loc` is where `value` came from (`['body', 'config_yaml']`); each
 * entry's `loc` goes on with the path inside it (`['body', 'config_yaml', 'name']`).
 */
export function refuseParsedNulCharacters(value: unknown, loc: readonly (string | number)[]): void {
  const found = findNulCharacters(value, MAX_FINDINGS);
  if (found.length === 0) return;
  const entries = toValidationErrors(found, 'body').map((entry) => ({
    ...entry,
    loc: [...loc, ...entry.loc.slice(1)],
  }));
  throw new AppError('request_invalid', `${loc.join('.')} holds a NUL character once parsed`, {
    body: { detail: entries },
  });
}
