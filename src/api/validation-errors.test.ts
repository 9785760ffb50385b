import { Ajv } from 'ajv';
import { Type } from 'typebox';
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
  it('names every allowed value of a union of literals, in one entry', () => {
    // The errors as the request validator's Ajv gives them: one per member, then the union's.
    const validate = new Ajv({ allErrors: true, verbose: true }).compile(
      Type.Object({
        action: Type.Union([Type.Literal('pause'), Type.Literal('resume'), Type.Literal('stop')]),
        level: Type.Union([Type.Literal('low'), Type.Integer()]),
      }),
    );
    expect(validate({ action: 'explode', level: 'high' })).toBe(false);
    const detail = toValidationErrors(validate.errors ?? [], 'body');
    expect(detail[0]).toEqual({
      loc: ['body', 'action'],
      msg: "Input should be 'pause', 'resume' or 'stop'",
      type: 'literal_error',
      input: 'explode',
      ctx: { expected: "'pause', 'resume' or 'stop'" },
    });
    // A union with a member other than a literal is not folded: each member says why, and the
    // union's own "does not match any allowed shape" adds nothing, so it is left out.
    expect(detail.slice(1).map((entry) => [entry.loc, entry.type])).toEqual([
      [['body', 'level'], 'literal_error'],
      [['body', 'level'], 'int_parsing'],
    ]);
  });
});
