/** Schemas shared by every endpoint group: errors and the validation report (spec 2.5, 7). */
import { Type } from 'typebox';

/** A free-form JSON object (kept whole by the response serializer). */
export const FreeObject = (description?: string) =>
  Type.Object({}, { additionalProperties: true, ...(description ? { description } : {}) });

/** The largest `offset` a list takes: the 32-bit bound the database's integers hold. */
export const MAX_OFFSET = 2_147_483_647;

/**
 * `limit` and `offset` of a list endpoint, bounded on both sides (a value past them is a 422),
 * the same for every list; spread into the list's query schema.
 */
export const pageQuery = (
  limits: { defaultLimit: number; maxLimit: number } = { defaultLimit: 100, maxLimit: 1000 },
) => ({
  limit: Type.Integer({ minimum: 1, maximum: limits.maxLimit, default: limits.defaultLimit }),
  offset: Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0 }),
});

/** The page `offset`/`limit` asks for, of a list held whole in memory. */
export function pageOf<T>(items: readonly T[], page: { offset: number; limit: number }): T[] {
  return items.slice(page.offset, page.offset + page.limit);
}

export const ErrorResponse = Type.Object(
  {
    detail: Type.Unknown({ description: 'what went wrong: a message (or, for 422, the list below)' }),
    code: Type.Optional(Type.String({ description: 'stable error code, see docs/errors.md' })),
  },
  { $id: 'ErrorResponse', additionalProperties: true, description: 'Standard error body (spec 7.1)' },
);

export const ValidationErrorItem = Type.Object(
  {
    loc: Type.Array(Type.Union([Type.String(), Type.Integer()]), {
      description: 'where: starts with body, query, path or header',
    }),
    msg: Type.String(),
    type: Type.String({ description: 'Pydantic-style error type, e.g. missing, less_than_equal' }),
    input: Type.Optional(Type.Unknown()),
    ctx: Type.Optional(FreeObject()),
  },
  { $id: 'ValidationError' },
);

export const HTTPValidationError = Type.Object(
  { detail: Type.Array(Type.Ref('ValidationError')) },
  { $id: 'HTTPValidationError', description: 'Request schema validation failure (spec 7.2), status 422' },
);

export const ValidationFinding = Type.Object(
  {
    severity: Type.Union([Type.Literal('error'), Type.Literal('warning')]),
    code: Type.String({
      description: 'stable finding code, see docs/validation-codes.md',
      examples: ['E202'],
    }),
    path: Type.String({ description: 'dotted path into the YAML, e.g. routes[0].adapters[1].type' }),
    message: Type.String(),
    remediation: Type.String({ description: 'what to change; the same input always gives the same text' }),
    line: Type.Union([Type.Integer(), Type.Null()], { description: '1-based line in the YAML, when known' }),
    column: Type.Union([Type.Integer(), Type.Null()], {
      description: '1-based column in the YAML, when known',
    }),
  },
  { $id: 'ValidationFinding' },
);

export const ValidationReport = Type.Object(
  {
    is_valid: Type.Boolean({ description: 'true when error_count is 0; warnings do not invalidate' }),
    error_count: Type.Integer({ minimum: 0 }),
    warning_count: Type.Integer({ minimum: 0 }),
    findings: Type.Array(Type.Ref('ValidationFinding'), { description: 'errors first, then warnings' }),
  },
  { $id: 'ValidationReport', description: 'Config validation report (spec 2.5)' },
);

/** Error responses by status, for route schemas. */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [
      status,
      status === 422 ? Type.Ref('HTTPValidationError') : Type.Ref('ErrorResponse'),
    ]),
  );

export const commonSchemas = [
  ErrorResponse,
  ValidationErrorItem,
  HTTPValidationError,
  ValidationFinding,
  ValidationReport,
];
