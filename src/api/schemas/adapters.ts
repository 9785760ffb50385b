/** Adapters group schemas (spec 2.3, 4.2). */
import { Type } from 'typebox';
import { adapterGroups } from '../../adapters/adapter.js';
import { FreeObject } from './common.js';

export const AdapterListResponse = Type.Object(
  {
    adapters: Type.Array(Type.String(), { description: 'registered adapter types, sorted' }),
    total: Type.Integer({ minimum: 0 }),
  },
  { $id: 'AdapterListResponse' },
);

export const AdapterInfoResponse = Type.Object(
  {
    type: Type.String(),
    group: Type.Union(adapterGroups.map((group) => Type.Literal(group))),
    summary: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    fan_out: Type.Boolean({ description: 'emits one message per item, each with an explicit destination' }),
    terminal: Type.Boolean({ description: 'ends a route; emits nothing downstream' }),
    config_schema: FreeObject('JSON Schema of the adapter config: each field with description and default'),
    input_schema: FreeObject('JSON Schema of the payload it reads'),
    output_schema: FreeObject('JSON Schema of the payload it emits (spec 2.2)'),
  },
  { $id: 'AdapterInfoResponse' },
);

export const ConfigValidationRequest = Type.Object(
  { config: FreeObject('adapter config to check, as it would appear under `config:` in the YAML') },
  { $id: 'ConfigValidationRequest', additionalProperties: false },
);

export const ConfigValidationResponse = Type.Object(
  {
    adapter_type: Type.String(),
    is_valid: Type.Boolean(),
    errors: Type.Array(
      Type.Object({
        path: Type.String({ description: 'JSON pointer into the config; empty for the whole config' }),
        message: Type.String(),
        keyword: Type.String({ description: 'JSON Schema keyword that failed' }),
      }),
    ),
    normalized_config: FreeObject('the config with defaults filled in'),
  },
  { $id: 'ConfigValidationResponse' },
);

export const adapterSchemas = [
  AdapterListResponse,
  AdapterInfoResponse,
  ConfigValidationRequest,
  ConfigValidationResponse,
];
