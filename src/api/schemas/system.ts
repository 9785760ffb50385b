/** System group schemas (spec 4.1) for the endpoints served so far. */
import { Type } from 'typebox';

const NamedVersion = Type.Object({ name: Type.String(), version: Type.String() });

export const VersionInfo = Type.Object(
  {
    service: Type.Object({
      name: Type.String(),
      version: Type.String({
        description:
          'exact version; only major.minor for a caller without a valid key when WEIR_API_KEYS is set',
      }),
    }),
    api_version: Type.String({ description: 'interface version implemented (spec 9.1)' }),
    // The components are left out for a caller without a valid key when WEIR_API_KEYS is set.
    runtime: Type.Optional(NamedVersion),
    framework: Type.Optional(NamedVersion),
    validation: Type.Optional(NamedVersion),
    database: Type.Optional(
      Type.Object({
        kind: Type.String({ description: 'pglite or postgres' }),
        version: Type.Union([Type.String(), Type.Null()], {
          description: 'server version, null when unreachable',
        }),
      }),
    ),
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
    starting: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'GET /system/ready only: start-up work still under way (the pipeline files); the instance answers 503 until it ends',
      }),
    ),
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

export const SystemMetrics = Type.Object(
  {
    messages_received: Type.Integer({ minimum: 0 }),
    messages_completed: Type.Integer({ minimum: 0 }),
    messages_failed: Type.Integer({ minimum: 0 }),
    messages_in_flight: Type.Integer({ minimum: 0 }),
    running_routes: Type.Integer({ minimum: 0 }),
    circuit_breakers: Type.Record(
      Type.String(),
      Type.Object({
        state: Type.Union([Type.Literal('closed'), Type.Literal('open'), Type.Literal('half_open')]),
        consecutive_failures: Type.Integer({ minimum: 0 }),
        opened_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      }),
      { description: 'by domain (host) of outbound requests' },
    ),
    uptime_seconds: Type.Number(),
  },
  { $id: 'SystemMetrics' },
);

export const ReloadResponse = Type.Object(
  {
    success: Type.Boolean(),
    routes_reloaded: Type.Integer({ minimum: 0 }),
    duration_ms: Type.Number(),
    message: Type.String(),
  },
  { $id: 'ReloadResponse' },
);

const NO_LINE_BREAK = '^[^\\r\\n\\u0000]*$';

export const MQDiagnosticRequest = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253 }),
    port: Type.Integer({ minimum: 1, maximum: 65535, default: 61613 }),
    // STOMP does not escape CONNECT headers: a line break would start a header of its own.
    username: Type.Optional(
      Type.String({ maxLength: 255, pattern: NO_LINE_BREAK, description: 'no CR, LF or NUL' }),
    ),
    // No pattern: a 422 would echo the password. The frame encoder refuses a line break in it.
    password: Type.Optional(Type.String()),
    virtual_host: Type.Optional(
      Type.String({
        maxLength: 255,
        pattern: NO_LINE_BREAK,
        description: 'STOMP `host` header; no CR, LF or NUL',
      }),
    ),
    tls: Type.Boolean({ default: false }),
    timeout_ms: Type.Integer({ minimum: 100, maximum: 60_000, default: 5000 }),
    queues: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
        maxItems: 100,
        description: 'round-trip these; default: every configured queue',
      }),
    ),
  },
  { $id: 'MQDiagnosticRequest', additionalProperties: false },
);

export const MQDiagnosticResponse = Type.Object(
  {
    success: Type.Boolean(),
    host: Type.String(),
    port: Type.Integer(),
    steps: Type.Array(
      Type.Object({
        phase: Type.Union(
          ['dns', 'tcp', 'tls', 'stomp_connect', 'round_trip'].map((phase) => Type.Literal(phase)),
        ),
        status: Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Literal('skipped')]),
        duration_ms: Type.Number(),
        detail: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
    connection: Type.Union([
      Type.Object({
        server: Type.Union([Type.String(), Type.Null()]),
        version: Type.String(),
        heart_beat: Type.Union([Type.String(), Type.Null()]),
        session: Type.Union([Type.String(), Type.Null()]),
      }),
      Type.Null(),
    ]),
    queues: Type.Array(
      Type.Object({
        queue: Type.String(),
        ok: Type.Boolean(),
        round_trip_ms: Type.Union([Type.Number(), Type.Null()]),
        error: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
    total_ms: Type.Number(),
  },
  { $id: 'MQDiagnosticResponse' },
);

export const systemSchemas = [
  VersionInfo,
  ComponentHealth,
  SystemHealthResponse,
  SystemConfigResponse,
  SystemMetrics,
  ReloadResponse,
  MQDiagnosticRequest,
  MQDiagnosticResponse,
];
