import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from './database-errors.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
    withCode('terminating connection due to administrator command', '57P01'),
    withCode('connection failure', '08006'),
    new Error('Connection terminated unexpectedly'),
    new Error('driver has already been destroyed'),
    new Error('the PGlite thread stopped (exit code 1)'),
    new Error('query failed', { cause: withCode('terminating connection', '57P01') }),
  ])('knows %s for the database being unreachable', (error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    withCode('duplicate key value violates unique constraint', '23505'),
    withCode('syntax error at or near "selec"', '42601'),
    new Error('something else'),
    // Another client's wrapped socket error (an LLM or embedding provider) is not the database.
    new Error('cannot reach the language model', { cause: withCode('connect ECONNREFUSED', 'ECONNREFUSED') }),
    'not an error',
  ])('leaves %s to the usual handling', (error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
