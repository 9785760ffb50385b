/** System group schemas (spec 4.1) for the endpoints served so far. */
import { Type } from 'typebox';

const NamedVersion = Type.Object({ name: Type.String(), version: Type.String() });

export const VersionInfo = Type.Object(
  {
    service: NamedVersion,
    api_version: Type.String({ description: 'interface version implemented (spec 9.1)' }),
    runtime: NamedVersion,
    framework: NamedVersion,
    validation: NamedVersion,
    database: Type.Object({
      kind: Type.String({ description: 'pglite or postgres' }),
      version: Type.Union([Type.String(), Type.Null()], {
        description: 'server version, null when unreachable',
      }),
    }),
  },
  { $id: 'VersionInfo' },
);

export const ComponentHealth = Type.Object(
  {
    status: Type.Union(
      ['healthy', 'unhealthy', 'not_configured', 'not_started'].map((status) => Type.Literal(status)),
    ),
    kind: Type.Optional(Type.String({ description: 'which implementation serves this port' })),
    latency_ms: Type.Optional(Type.Number()),
    connection: Type.Optional(
      Type.String({ description: 'debug only: where it connects, without credentials' }),
    ),
    error: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'debug only: last error' })),
  },
  { $id: 'ComponentHealth' },
);

export const SystemHealthResponse = Type.Object(
  {
    status: Type.Union([Type.Literal('healthy'), Type.Literal('degraded'), Type.Literal('unhealthy')]),
    timestamp: Type.String({ format: 'date-time' }),
    components: Type.Object({
      database: Type.Ref('ComponentHealth'),
      queue: Type.Ref('ComponentHealth'),
      storage: Type.Ref('ComponentHealth'),
      orchestrator: Type.Ref('ComponentHealth'),
    }),
  },
  { $id: 'SystemHealthResponse' },
);

export const SystemConfigResponse = Type.Object(
  {
    settings: Type.Object(
      {},
      {
        additionalProperties: true,
        description: 'effective settings; secret fields read ******** and URL passwords are masked',
      },
    ),
  },
  { $id: 'SystemConfigResponse' },
);

export const systemSchemas = [VersionInfo, ComponentHealth, SystemHealthResponse, SystemConfigResponse];
