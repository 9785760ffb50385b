/**
 * Service settings: one TypeBox schema, read from an optional YAML/JSON file
 * (`WEIR_CONFIG_FILE`) and then from environment variables, which win.
 *
 * Fields holding secrets carry `x-secret`: `true` hides the whole value, `'url'` hides only the
 * password inside a connection URL. `sanitizeSettings` walks the schema with those marks, so a
 * new secret field is hidden by declaring it, not by remembering a list elsewhere.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Static, type TSchema, Type } from 'typebox';
import { Value } from 'typebox/value';
import { parse as parseYaml } from 'yaml';
import { normalizeSecrets, secretsFromEnvironment } from './secrets.js';

/**
 * The largest message budget a setting or a config may give an execution: the count of messages
 * it created (executions.created_messages, migration 0016) is a 32-bit integer.
 */
export const MAX_MESSAGE_BUDGET = 2_000_000_000;

const EmbeddingModelSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'model name used in search requests and the index' }),
    provider: Type.Union([Type.Literal('hash'), Type.Literal('openai'), Type.Literal('onnx')], {
      description:
        'hash: offline feature hashing; openai: an OpenAI-compatible /v1/embeddings; onnx: local model dir',
    }),
    dimensions: Type.Integer({ minimum: 1, maximum: 16000, default: 384 }),
    base_url: Type.Optional(Type.String({ description: 'provider endpoint (openai)' })),
    model: Type.Optional(Type.String({ description: 'provider-side model name (openai)' })),
    model_path: Type.Optional(Type.String({ description: 'directory of a local ONNX model (onnx)' })),
    api_key: Type.Optional(Type.String({ 'x-secret': true })),
    timeout_ms: Type.Optional(
      Type.Integer({ minimum: 100, description: 'per request (openai), default 30000' }),
    ),
    max_batch_size: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2048,
        description: 'texts per request (openai, default 96) or per inference batch (onnx, default 32)',
      }),
    ),
  },
  { additionalProperties: false },
);

const LlmProfileSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'profile name used by chat requests and adapters' }),
    provider: Type.Union([Type.Literal('extractive'), Type.Literal('openai')], {
      description: 'extractive: offline, quotes and cites the best passages; openai: OpenAI-compatible chat',
    }),
    base_url: Type.Optional(Type.String()),
    model: Type.Optional(Type.String()),
    api_key: Type.Optional(Type.String({ 'x-secret': true })),
    timeout_ms: Type.Integer({ minimum: 100, default: 60_000 }),
  },
  { additionalProperties: false },
);

export const SettingsSchema = Type.Object(
  {
    host: Type.String({ default: '127.0.0.1', description: 'env HOST' }),
    port: Type.Integer({ minimum: 0, maximum: 65535, default: 8080, description: 'env PORT' }),
    allowed_hosts: Type.Array(Type.String({ minLength: 1 }), {
      default: [],
      description:
        'env WEIR_ALLOWED_HOSTS, comma-separated host names (weir.example.com): Host headers answered besides localhost, HOST and (bound to loopback or to every address) the loopback addresses; bound to 0.0.0.0 or ::, any IP address is answered too. An Origin on a listed name is trusted for state-changing requests. Others get 421 host_not_allowed (DNS rebinding)',
    }),
    public_url: Type.Optional(
      Type.String({
        pattern: '^https?://[^/?#\\s]+(/[^?#\\s]*)?$',
        description:
          'env WEIR_PUBLIC_URL (https://weir.example.com, or with the path a reverse proxy serves it under): the address other systems reach this service at; links published elsewhere (kbase_writer pages citing stored sources) are made from it. Unset = http://HOST:PORT (loopback when bound to every address)',
      }),
    ),
    data_dir: Type.String({
      default: './.weir',
      description: 'env WEIR_DATA_DIR: embedded database and files',
    }),
    database_url: Type.Optional(
      Type.String({
        'x-secret': 'url',
        description: 'env DATABASE_URL; unset = embedded PGlite in data_dir',
      }),
    ),
    pglite_settings: Type.Array(Type.String({ minLength: 1 }), {
      default: [],
      description:
        'env WEIR_PGLITE_SETTINGS, comma-separated name=value: Postgres settings of the embedded database over its defaults (shared_buffers=16MB; docs/operations.md); ignored with DATABASE_URL',
    }),
    pglite_recycle_idle_ms: Type.Integer({
      minimum: 0,
      default: 5_000,
      description:
        'env WEIR_PGLITE_RECYCLE_IDLE_MS: idle time after which the embedded database thread is reopened to give its grown memory back, when the process grew by pglite_recycle_growth_mb since it opened; 0 = never (docs/operations.md)',
    }),
    pglite_recycle_growth_mb: Type.Integer({
      minimum: 0,
      default: 32,
      description: 'env WEIR_PGLITE_RECYCLE_GROWTH_MB: RSS growth in MB that makes an idle recycle worth it',
    }),
    idle_gc_ms: Type.Integer({
      minimum: 0,
      default: 5_000,
      description:
        "env WEIR_IDLE_GC_MS: a quiet window this long after V8's heap grew by 16 MB runs one full garbage collection, giving the grown heap back (the service's thread and the embedded database's each); 0 = never (docs/operations.md)",
    }),
    broker_url: Type.Optional(
      Type.String({ 'x-secret': 'url', description: 'env BROKER_URL; unset = in-process queues' }),
    ),
    storage_url: Type.Optional(
      Type.String({
        'x-secret': 'url',
        description: 'env STORAGE_URL: s3://bucket/prefix; unset = files under data_dir/objects',
      }),
    ),
    s3_endpoint: Type.Optional(
      Type.String({
        description: 'env WEIR_S3_ENDPOINT: an S3-compatible server (http://host:9000); unset = AWS S3',
      }),
    ),
    s3_region: Type.String({ minLength: 1, default: 'us-east-1', description: 'env WEIR_S3_REGION' }),
    s3_access_key_id: Type.Optional(
      Type.String({
        'x-secret': true,
        description: 'env WEIR_S3_ACCESS_KEY_ID; unset = the AWS SDK default credential chain',
      }),
    ),
    s3_secret_access_key: Type.Optional(
      Type.String({ 'x-secret': true, description: 'env WEIR_S3_SECRET_ACCESS_KEY' }),
    ),
    s3_force_path_style: Type.Optional(
      Type.Boolean({
        description: 'env WEIR_S3_FORCE_PATH_STYLE: path-style URLs; default on when s3_endpoint is set',
      }),
    ),
    api_keys: Type.Array(Type.String({ minLength: 1 }), {
      default: [],
      'x-secret': true,
      description: 'env WEIR_API_KEYS, comma-separated; empty = API open',
    }),
    metrics_tokens: Type.Array(Type.String({ minLength: 1 }), {
      default: [],
      'x-secret': true,
      description:
        'env WEIR_METRICS_TOKENS, comma-separated: bearer tokens a Prometheus scraper sends for GET /metrics (and nothing else). Set, /metrics needs one of them or an API key; unset, /metrics is guarded like the API (WEIR_API_KEYS)',
    }),
    metrics_port: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 65535,
        description:
          'env WEIR_METRICS_PORT: a `--role worker` process, which serves no API, serves GET /metrics (and the health probe) on this port',
      }),
    ),
    secrets: Type.Record(Type.String({ pattern: '^[a-z0-9_]+$' }), Type.String(), {
      default: {},
      'x-secret': true,
      description:
        'named credentials pipeline steps refer to (a wiki token, say) instead of holding them: env WEIR_SECRET_<NAME> sets `<name>` (lower-cased), WEIR_SECRETS a JSON object of names to a value or {value, origins}',
    }),
    // Not secret: shown by GET /system/config, so an operator sees where each secret may go.
    secret_origins: Type.Record(Type.String({ pattern: '^[a-z0-9_]+$' }), Type.Array(Type.String()), {
      default: {},
      description:
        'where each named secret may be sent (src/secrets.ts): env WEIR_SECRET_<NAME>_ORIGINS, comma-separated origins (https://acme.atlassian.net); a secret without origins is sent nowhere; * = anywhere (development only, warned about)',
    }),
    pipelines_dir: Type.String({
      default: './examples',
      description: 'env WEIR_PIPELINES_DIR: pipeline YAML files loaded as configs at start-up',
    }),
    fileshare_roots: Type.Array(Type.String({ minLength: 1 }), {
      default: ['./examples', './docs', './README.md'],
      description:
        'env WEIR_FILESHARE_ROOTS, comma-separated: directories (anything under them) and single files the local fileshare adapters may read',
    }),
    webhook_allowed_cidrs: Type.Array(Type.String({ minLength: 1 }), {
      default: [],
      description:
        'env WEIR_WEBHOOK_ALLOWED_CIDRS, comma-separated CIDRs (e.g. 10.0.0.0/8): private or loopback webhook targets allowed',
    }),
    fetch_allowed_cidrs: Type.Array(Type.String({ minLength: 1 }), {
      default: [],
      description:
        'env WEIR_FETCH_ALLOWED_CIDRS, comma-separated CIDRs (e.g. 127.0.0.0/8): loopback, link-local, metadata or reserved addresses the web fetchers may connect to (public and private ones always may)',
    }),
    mq_diagnostic_allowed_cidrs: Type.Array(Type.String({ minLength: 1 }), {
      default: [],
      description:
        'env WEIR_MQ_DIAGNOSTIC_ALLOWED_CIDRS, comma-separated CIDRs (e.g. 10.0.0.0/8): private or loopback mq-diagnostic targets allowed besides the configured broker host',
    }),
    log_level: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
      { default: 'info', description: 'env WEIR_LOG_LEVEL' },
    ),
    log_format: Type.Union([Type.Literal('auto'), Type.Literal('json'), Type.Literal('pretty')], {
      default: 'auto',
      description:
        'env WEIR_LOG_FORMAT: `json` (one JSON object per line), `pretty` (readable, pino-pretty) or `auto` (pretty on a terminal, JSON otherwise)',
    }),
    chromium_path: Type.String({
      default: '/usr/bin/chromium',
      description: 'env WEIR_CHROMIUM_PATH: the Chromium binary web_crawler drives (never downloaded)',
    }),
    body_limit_bytes: Type.Integer({
      minimum: 1024,
      default: 10 * 1024 * 1024,
      description: 'env WEIR_BODY_LIMIT',
    }),
    request_timeout_ms: Type.Integer({
      minimum: 100,
      default: 60_000,
      description:
        'env WEIR_REQUEST_TIMEOUT_MS: longest time to receive a whole request, headers and body (a client trickling a byte at a time is cut off with 408); answers may take longer',
    }),
    embedding_models: Type.Array(EmbeddingModelSchema, {
      default: [{ name: 'hash', provider: 'hash', dimensions: 384 }],
      description: 'env WEIR_EMBEDDING_MODELS (JSON array)',
    }),
    search_lsa: Type.Union([Type.Literal('on'), Type.Literal('off')], {
      default: 'off',
      description:
        "env WEIR_SEARCH_LSA: on = RRF search fuses a third list, the corpus LSA (a rank-200 SVD of the segments' terms, built on a worker thread after executions end; docs/search-and-chat.md). Off: no LSA memory or work at all",
    }),
    llm_profiles: Type.Array(LlmProfileSchema, {
      default: [{ name: 'extractive', provider: 'extractive', timeout_ms: 60_000 }],
      description: 'env WEIR_LLM_PROFILES (JSON array)',
    }),
    chat_heartbeat_ms: Type.Integer({
      minimum: 10,
      default: 15_000,
      description: 'env WEIR_CHAT_HEARTBEAT_MS: quiet time before a chat stream sends a heartbeat comment',
    }),
    max_event_streams: Type.Integer({
      minimum: 1,
      maximum: 10_000,
      default: 64,
      description:
        'env WEIR_MAX_EVENT_STREAMS: executions event streams (GET /executions/events) one instance keeps open at once; one more answers 503 event_streams_full',
    }),
    max_lineage_depth: Type.Integer({
      minimum: 1,
      default: 1000,
      description:
        'env WEIR_MAX_LINEAGE_DEPTH: generations a message may be from its init or replayed ancestor; a deeper one fails, so a cycle of routes cannot run for ever',
    }),
    max_messages_per_execution: Type.Integer({
      minimum: 1,
      maximum: MAX_MESSAGE_BUDGET,
      default: 2_000_000,
      description:
        'env WEIR_MAX_MESSAGES_PER_EXECUTION: messages one execution may create (init message included); past it the execution fails, so routes fanning out in a cycle cannot grow without end. A config may set a lower max_messages_per_execution, never a higher one',
    }),
  },
  { additionalProperties: false },
);

export type Settings = Static<typeof SettingsSchema>;

/** Environment variable -> settings field, and how its text becomes a value. */
const environmentFields: Record<string, { field: keyof Settings; parse: (text: string) => unknown }> = {
  HOST: { field: 'host', parse: (text) => text },
  PORT: { field: 'port', parse: Number },
  WEIR_ALLOWED_HOSTS: { field: 'allowed_hosts', parse: splitList },
  WEIR_PUBLIC_URL: { field: 'public_url', parse: (text) => text },
  WEIR_DATA_DIR: { field: 'data_dir', parse: (text) => text },
  DATABASE_URL: { field: 'database_url', parse: (text) => text },
  WEIR_PGLITE_SETTINGS: { field: 'pglite_settings', parse: splitList },
  WEIR_PGLITE_RECYCLE_IDLE_MS: { field: 'pglite_recycle_idle_ms', parse: Number },
  WEIR_PGLITE_RECYCLE_GROWTH_MB: { field: 'pglite_recycle_growth_mb', parse: Number },
  WEIR_IDLE_GC_MS: { field: 'idle_gc_ms', parse: Number },
  BROKER_URL: { field: 'broker_url', parse: (text) => text },
  STORAGE_URL: { field: 'storage_url', parse: (text) => text },
  WEIR_S3_ENDPOINT: { field: 's3_endpoint', parse: (text) => text },
  WEIR_S3_REGION: { field: 's3_region', parse: (text) => text },
  WEIR_S3_ACCESS_KEY_ID: { field: 's3_access_key_id', parse: (text) => text },
  WEIR_S3_SECRET_ACCESS_KEY: { field: 's3_secret_access_key', parse: (text) => text },
  WEIR_S3_FORCE_PATH_STYLE: { field: 's3_force_path_style', parse: parseBoolean },
  WEIR_API_KEYS: { field: 'api_keys', parse: splitList },
  WEIR_METRICS_TOKENS: { field: 'metrics_tokens', parse: splitList },
  WEIR_METRICS_PORT: { field: 'metrics_port', parse: Number },
  WEIR_PIPELINES_DIR: { field: 'pipelines_dir', parse: (text) => text },
  WEIR_LOG_LEVEL: { field: 'log_level', parse: (text) => text },
  WEIR_LOG_FORMAT: { field: 'log_format', parse: (text) => text },
  WEIR_WEBHOOK_ALLOWED_CIDRS: { field: 'webhook_allowed_cidrs', parse: splitList },
  WEIR_MQ_DIAGNOSTIC_ALLOWED_CIDRS: { field: 'mq_diagnostic_allowed_cidrs', parse: splitList },
  WEIR_FETCH_ALLOWED_CIDRS: { field: 'fetch_allowed_cidrs', parse: splitList },
  WEIR_FILESHARE_ROOTS: { field: 'fileshare_roots', parse: splitList },
  WEIR_CHROMIUM_PATH: { field: 'chromium_path', parse: (text) => text },
  WEIR_BODY_LIMIT: { field: 'body_limit_bytes', parse: Number },
  WEIR_REQUEST_TIMEOUT_MS: { field: 'request_timeout_ms', parse: Number },
  WEIR_EMBEDDING_MODELS: { field: 'embedding_models', parse: (text) => JSON.parse(text) },
  WEIR_LLM_PROFILES: { field: 'llm_profiles', parse: (text) => JSON.parse(text) },
  WEIR_SEARCH_LSA: { field: 'search_lsa', parse: (text) => text },
  WEIR_CHAT_HEARTBEAT_MS: { field: 'chat_heartbeat_ms', parse: Number },
  WEIR_MAX_EVENT_STREAMS: { field: 'max_event_streams', parse: Number },
  WEIR_MAX_LINEAGE_DEPTH: { field: 'max_lineage_depth', parse: Number },
  WEIR_MAX_MESSAGES_PER_EXECUTION: { field: 'max_messages_per_execution', parse: Number },
};

function parseBoolean(text: string): boolean {
  if (/^(true|1|yes|on)$/i.test(text)) return true;
  if (/^(false|0|no|off)$/i.test(text)) return false;
  throw new Error(`${JSON.stringify(text)} is not a boolean (true or false)`);
}

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

export class SettingsError extends Error {
  override name = 'SettingsError';
}

/**
 * Settings from `file` (if given or named by WEIR_CONFIG_FILE) overlaid with `environment`.
 * Throws a SettingsError naming every bad field; never echoes a secret value.
 */
export function loadSettings(
  environment: Record<string, string | undefined> = process.env,
  overrides: Partial<Settings> = {},
): Settings {
  const raw: Record<string, unknown> = {};
  const file = environment.WEIR_CONFIG_FILE;
  if (file) Object.assign(raw, readSettingsFile(file));
  for (const [variable, { field, parse }] of Object.entries(environmentFields)) {
    const text = environment[variable];
    if (text === undefined || text === '') continue;
    try {
      raw[field] = parse(text);
    } catch (error) {
      throw new SettingsError(`${variable} cannot be parsed: ${(error as Error).message}`);
    }
  }
  const fromEnvironment = secretsFromEnvironment(environment);
  for (const field of ['secrets', 'secret_origins'] as const) {
    const named = fromEnvironment.raw[field];
    if (named) raw[field] = { ...(raw[field] as Record<string, unknown> | undefined), ...named };
  }
  Object.assign(raw, overrides);
  const secrets = normalizeSecrets(raw);
  const secretProblems = [...fromEnvironment.problems, ...secrets.problems];
  if (secretProblems.length > 0)
    throw new SettingsError(`invalid secrets:\n  ${secretProblems.join('\n  ')}`);
  raw.secrets = secrets.secrets;
  raw.secret_origins = secrets.secret_origins;
  const settings = Value.Default(SettingsSchema, raw) as Settings;
  const problems = [...Value.Errors(SettingsSchema, settings)].map(
    (error) => `${error.instancePath || '/'}: ${error.message}`,
  );
  if (problems.length > 0) throw new SettingsError(`invalid settings:\n  ${problems.join('\n  ')}`);
  return settings;
}

function readSettingsFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path.resolve(file), 'utf8');
  } catch (error) {
    throw new SettingsError(`WEIR_CONFIG_FILE ${file} cannot be read: ${(error as Error).message}`);
  }
  const parsed: unknown = parseYaml(text);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new SettingsError(`WEIR_CONFIG_FILE ${file} must hold a mapping of settings`);
  }
  return parsed as Record<string, unknown>;
}

export const HIDDEN = '********';

/** A copy of `value` with every field marked `x-secret` in `schema` hidden. */
export function sanitizeSettings(settings: Settings): Record<string, unknown> {
  return sanitizeValue(SettingsSchema, settings) as Record<string, unknown>;
}

function sanitizeValue(schema: TSchema, value: unknown): unknown {
  if (value === undefined || value === null) return value;
  const mark = (schema as { 'x-secret'?: unknown })['x-secret'];
  if (mark === true) return Array.isArray(value) ? value.map(() => HIDDEN) : HIDDEN;
  if (mark === 'url' && typeof value === 'string') return hideUrlPassword(value);
  const objectSchema = schema as { properties?: Record<string, TSchema>; items?: TSchema };
  if (objectSchema.items && Array.isArray(value)) {
    const items = objectSchema.items;
    return value.map((item) => sanitizeValue(items, item));
  }
  if (objectSchema.properties && typeof value === 'object') {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      const property = objectSchema.properties[key];
      // A field the schema does not know cannot be proven harmless: leave it out.
      if (property) result[key] = sanitizeValue(property, item);
    }
    return result;
  }
  return value;
}

function hideUrlPassword(text: string): string {
  try {
    const url = new URL(text);
    if (url.password) url.password = HIDDEN;
    for (const key of [...url.searchParams.keys()]) {
      if (/pass|secret|token|key/i.test(key)) url.searchParams.set(key, HIDDEN);
    }
    return url.toString();
  } catch {
    // Not a URL we can take apart: it may hold anything, so hide it whole.
    return HIDDEN;
  }
}
