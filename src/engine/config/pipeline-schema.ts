/**
 * The shape of a pipeline config YAML document. This schema is the structural half of
 * validation (types, required fields, ranges); `validate-config.ts` adds the rules that need
 * the adapter registry or the whole document. docs/pipeline-config.md documents each field.
 */
import { type Static, Type } from 'typebox';
import { MAX_MESSAGE_BUDGET } from '../../settings.js';

export const monitoringChecks = ['console', 'queue_connectivity', 'storage_accessibility'] as const;

const identifier = (description: string) =>
  Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$', description });

export const RetryPolicySchema = Type.Object(
  {
    max_attempts: Type.Integer({
      minimum: 1,
      maximum: 20,
      default: 3,
      description: 'attempts per message, first included',
    }),
    backoff_ms: Type.Integer({
      minimum: 0,
      maximum: 3_600_000,
      default: 1000,
      description: 'delay before the 2nd attempt',
    }),
    multiplier: Type.Number({
      minimum: 1,
      maximum: 10,
      default: 2,
      description: 'growth of the delay per attempt',
    }),
    max_backoff_ms: Type.Integer({
      minimum: 0,
      maximum: 86_400_000,
      default: 60_000,
      description: 'ceiling of the delay',
    }),
  },
  { additionalProperties: false },
);

export const AdapterStepSchema = Type.Object(
  {
    type: Type.String({ minLength: 1, description: 'registered adapter type (GET /api/v1/adapters)' }),
    name: Type.Optional(identifier('stage name, unique in its route; defaults to the type')),
    config: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'adapter config, see its schema' }),
    ),
    concurrency: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 256,
        default: 1,
        description:
          'adapter calls at once by this stage (it holds up to four times as many messages, and at least 64 more)',
      }),
    ),
    retry: Type.Optional(RetryPolicySchema),
    batch: Type.Optional(
      Type.Object(
        {
          size: Type.Integer({
            minimum: 2,
            maximum: 1000,
            description: 'messages handed to the adapter at once',
          }),
          max_wait_ms: Type.Integer({
            minimum: 0,
            maximum: 60_000,
            default: 100,
            description: 'longest wait for a batch to fill before it runs with fewer',
          }),
        },
        {
          additionalProperties: false,
          description: 'only for adapters that accept batches (spec 2.1 rule 4)',
        },
      ),
    ),
    destination: Type.Optional(
      identifier("route id whose inbound queue receives this stage's outputs instead of the next stage"),
    ),
  },
  { additionalProperties: false },
);

export const RouteSchema = Type.Object(
  {
    id: identifier('route id, unique in the config; names its queues'),
    description: Type.Optional(Type.String()),
    adapters: Type.Array(AdapterStepSchema, { minItems: 1, description: 'stages, in order' }),
  },
  { additionalProperties: false },
);

export const PipelineDocumentSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String()),
    run_on_load: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          'pipeline files only: run once when `weir serve` loads the file new or changed (false for pipelines that need the network or a manual start)',
      }),
    ),
    init_message: Type.Optional(
      Type.Object(
        {
          route: Type.Optional(
            identifier('route that receives the init message; defaults to the first route'),
          ),
          payload: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        },
        { additionalProperties: false },
      ),
    ),
    max_messages_per_execution: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_MESSAGE_BUDGET,
        description:
          'messages one run may create, init message included; past it the run fails. Lowers the max_messages_per_execution setting (WEIR_MAX_MESSAGES_PER_EXECUTION) for this config; a higher value is capped at the setting',
      }),
    ),
    allow_fanout_cycles: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'allow routes that fan out in a cycle (error E216 otherwise): the run is then bounded only by max_lineage_depth and max_messages_per_execution',
      }),
    ),
    monitoring: Type.Optional(
      Type.Object(
        {
          checks: Type.Optional(Type.Array(Type.String())),
          interval_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400, default: 60 })),
        },
        { additionalProperties: false },
      ),
    ),
    routes: Type.Array(RouteSchema, { minItems: 1 }),
  },
  { additionalProperties: false },
);

export type PipelineDocument = Static<typeof PipelineDocumentSchema>;
export type RouteDefinition = Static<typeof RouteSchema>;
export type AdapterStep = Static<typeof AdapterStepSchema>;
