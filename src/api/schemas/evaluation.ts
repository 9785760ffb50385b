/** Retrieval evaluation (Weir's extension of the chat group): questions in, a report out. */
import { Type } from 'typebox';
import { RRFSearchRequest } from './chat.js';
import { FreeObject } from './common.js';

/** Most questions one request may evaluate (a larger body answers 422). */
export const maxEvaluationQuestions = 1000;

const label = (description: string) => Type.Optional(Type.String({ maxLength: 100, description }));

export const EvaluationQuestion = Type.Object(
  {
    id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'default: q<n>, n its 1-based position' }),
    ),
    question: Type.String({ minLength: 1, maxLength: 2000 }),
    expected: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
      minItems: 1,
      maxItems: 50,
      description:
        'pages that answer it: a URL or object key, or their last path parts ("routine-vacuuming.html" matches http://host/docs/routine-vacuuming.html)',
    }),
    style: label('a label the report breaks figures down by, e.g. keyword or paraphrase'),
    language: label('a label the report breaks figures down by, e.g. en or no (not a search option)'),
    split: label('a label the report breaks figures down by, e.g. dev or test'),
  },
  { $id: 'EvaluationQuestion', additionalProperties: false },
);

// The search request's options apply to every search mode; `query` comes from each question
// and `limit` has its own default here.
const { query: _query, limit: _limit, ...searchOptions } = RRFSearchRequest.properties;

export const evaluationModeNames = ['keyword', 'vector', 'rrf', 'chat'] as const;

export const EvaluationRequest = Type.Object(
  {
    questions: Type.Array(Type.Ref('EvaluationQuestion'), { minItems: 1, maxItems: maxEvaluationQuestions }),
    modes: Type.Optional(
      Type.Array(Type.Union(evaluationModeNames.map((mode) => Type.Literal(mode))), {
        minItems: 1,
        maxItems: evaluationModeNames.length,
        uniqueItems: true,
        description:
          'default keyword, vector and rrf (keyword only without pgvector); chat scores the sources its answer cites, in citation order, with the chat defaults',
      }),
    ),
    limit: Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 50,
      description: 'segments asked of each search; reduced to distinct documents before scoring',
    }),
    ...searchOptions,
  },
  { $id: 'EvaluationRequest', additionalProperties: false },
);

const Metrics = Type.Object({
  hit_at_1: Type.Number(),
  hit_at_5: Type.Number(),
  hit_at_10: Type.Number(),
  mrr_at_10: Type.Number(),
  ndcg_at_10: Type.Number(),
});

const Latency = Type.Object({ p50: Type.Number(), p99: Type.Number(), mean: Type.Number() });

const nullableString = Type.Union([Type.String(), Type.Null()]);

export const EvaluationModeReport = Type.Object(
  {
    mode: Type.String(),
    questions: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0, description: 'questions whose retrieval failed (they score 0)' }),
    metrics: Metrics,
    subsets: Type.Array(
      Type.Object({
        field: Type.String({ description: 'style, language or split' }),
        value: Type.String(),
        questions: Type.Integer({ minimum: 0 }),
        metrics: Metrics,
      }),
    ),
    latency_ms: Latency,
    server_ms: Type.Union([Latency, Type.Null()]),
    misses: Type.Array(
      Type.Object({
        id: Type.String(),
        question: Type.String(),
        expected: Type.Array(Type.String()),
        expected_rank: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
          description: 'rank of the first expected page among every document returned (beyond 10), or null',
        }),
        returned: Type.Array(
          Type.Object({
            rank: Type.Integer({ minimum: 1 }),
            url: nullableString,
            object_key: nullableString,
            title: nullableString,
          }),
        ),
      }),
      { description: 'questions with no expected page among the first 10 documents' },
    ),
    errors: Type.Array(Type.Object({ id: Type.String(), question: Type.String(), error: Type.String() })),
  },
  { $id: 'EvaluationModeReport' },
);

export const EvaluationReport = Type.Object(
  {
    questions: Type.Integer({ minimum: 0 }),
    modes: Type.Array(Type.Ref('EvaluationModeReport')),
    parameters: FreeObject('the limit and search options every search mode ran with'),
    took_ms: Type.Number(),
  },
  { $id: 'EvaluationReport' },
);

export const evaluationSchemas = [
  EvaluationQuestion,
  EvaluationRequest,
  EvaluationModeReport,
  EvaluationReport,
];
