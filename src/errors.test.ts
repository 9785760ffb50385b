import { describe, expect, it } from 'vitest';
import { AppError, errorBody, MAX_DETAIL_CHARACTERS } from './errors.js';

describe('AppError bounds what it echoes (issue 30)', () => {
  const huge = 'x'.repeat(100_000);

  it('cuts a detail that holds a 100 KB request value to an excerpt', () => {
    const body = errorBody(new AppError('search_request_invalid', `unknown language "${huge}"`));
    expect(body.detail).toBe(
      `unknown language "${'x'.repeat(MAX_DETAIL_CHARACTERS - 18)}… (${100_019 - MAX_DETAIL_CHARACTERS} more characters)`,
    );
    expect(body.code).toBe('search_request_invalid');
  });

  it('cuts every string of the extra fields, however nested', () => {
    const body = errorBody(
      new AppError('template_invalid', 'invalid template settings', {
        body: { errors: [huge, 'short'], nested: { deep: [{ value: huge }] }, count: 2 },
      }),
    );
    expect(JSON.stringify(body).length).toBeLessThan(3 * MAX_DETAIL_CHARACTERS + 300);
    expect(body).toMatchObject({
      errors: [expect.stringMatching(/^x+… \(99000 more characters\)$/), 'short'],
      count: 2,
    });
  });

  it('leaves the messages the service writes itself as they are', () => {
    const message = 'the orchestrator is not running';
    expect(errorBody(new AppError('orchestrator_unavailable', message)).detail).toBe(message);
  });
});
