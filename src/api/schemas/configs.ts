/** Configs group schemas (spec 2.4, 4.5). */
import { Type } from 'typebox';
import { MAX_CONFIG_BYTES } from '../../engine/config/parse-config.js';

const configYaml = Type.String({
  minLength: 1,
  maxLength: MAX_CONFIG_BYTES,
  description: 'pipeline config YAML (docs/pipeline-config.md)',
});

export const ConfigCreateRequest = Type.Object(
  {
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'defaults to the YAML `name`' }),
    ),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    config_yaml: configYaml,
    origin: Type.Optional(
      Type.String({ minLength: 1, maxLength: 500, description: 'where the YAML came from; default `api`' }),
    ),
  },
  { $id: 'ConfigCreateRequest', additionalProperties: false },
);

export const ConfigUpdateRequest = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    config_yaml: Type.Optional(configYaml),
  },
  {
    $id: 'ConfigUpdateRequest',
    additionalProperties: false,
    minProperties: 1,
    description: 'Fields to change; the server increments version and recomputes config_hash',
  },
);

export const ValidateConfigRequest = Type.Object(
  { config_yaml: Type.String({ maxLength: MAX_CONFIG_BYTES }) },
  { $id: 'ValidateConfigRequest', additionalProperties: false },
);

const summaryFields = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  origin: Type.String({
    description: '`api`, or `file:<path>` for configs loaded from the pipelines folder',
  }),
  config_hash: Type.String({ description: 'SHA-256 (hex) of config_yaml' }),
  version: Type.Integer({ minimum: 1 }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  is_active: Type.Boolean(),
  validation_report: Type.Ref('ValidationReport'),
};

export const ConfigSummary = Type.Object(
  { ...summaryFields, is_runnable: Type.Boolean() },
  { $id: 'ConfigSummary', description: 'A config in a list: the detail record without its YAML' },
);

export const PipelineConfigResponse = Type.Object(
  {
    ...summaryFields,
    config_yaml: Type.String(),
    is_runnable: Type.Boolean({ description: 'active and without validation errors' }),
  },
  { $id: 'PipelineConfigResponse', description: 'Stored config with a freshly derived validation report' },
);

export const ConfigDetailResponse = Type.Object(PipelineConfigResponse.properties, {
  $id: 'ConfigDetailResponse',
  required: PipelineConfigResponse.required,
  description: 'Same record as PipelineConfigResponse',
});

export const ConfigListResponse = Type.Object(
  {
    configs: Type.Array(Type.Ref('ConfigSummary')),
    total: Type.Integer({ minimum: 0, description: 'active configs in all' }),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: 'ConfigListResponse' },
);

export const configSchemas = [
  ConfigCreateRequest,
  ConfigUpdateRequest,
  ValidateConfigRequest,
  ConfigSummary,
  PipelineConfigResponse,
  ConfigDetailResponse,
  ConfigListResponse,
];
