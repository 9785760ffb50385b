import { describe, expect, it } from 'vitest';
import { toValidationErrors } from './validation-errors.js';

describe('toValidationErrors', () => {
  it('maps locations to body/query/path and keeps the input', () => {
    const detail = toValidationErrors(
      [{ keyword: 'maximum', instancePath: '/limit', params: { comparison: '<=', limit: 1000 }, data: 1001 }],
      'querystring',
    );
    expect(detail).toEqual([
      {
        loc: ['query', 'limit'],
        msg: 'Input should be less than or equal to 1000',
        type: 'less_than_equal',
        input: 1001,
        ctx: { le: 1000 },
      },
    ]);
  });

  it('puts the missing field at the end of loc', () => {
    const detail = toValidationErrors(
      [{ keyword: 'required', instancePath: '/routes/0', params: { missingProperty: 'id' }, data: {} }],
      'body',
    );
    expect(detail[0]).toMatchObject({
      loc: ['body', 'routes', 0, 'id'],
      type: 'missing',
      msg: 'Field required',
    });
  });

  it('reports a missing body as missing, not as a type error', () => {
    const detail = toValidationErrors(
      [{ keyword: 'type', instancePath: '', params: { type: 'object' } }],
      'body',
    );
    expect(detail).toEqual([{ loc: ['body'], msg: 'Field required', type: 'missing', input: null }]);
  });

  it('tells parsing failures of text from wrong JSON types', () => {
    const fromQuery = toValidationErrors(
      [{ keyword: 'type', instancePath: '/limit', params: { type: 'integer' }, data: 'ten' }],
      'querystring',
    );
    const fromBody = toValidationErrors(
      [{ keyword: 'type', instancePath: '/limit', params: { type: 'integer' }, data: true }],
      'body',
    );
    expect(fromQuery[0]?.type).toBe('int_parsing');
    expect(fromBody[0]?.type).toBe('int_type');
  });

  it('names UUID failures on path parameters', () => {
    const detail = toValidationErrors(
      [{ keyword: 'format', instancePath: '/config_id', params: { format: 'uuid' }, data: 'x' }],
      'params',
    );
    expect(detail).toEqual([
      { loc: ['path', 'config_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing', input: 'x' },
    ]);
  });
});
