/**
 * One catalogue of the errors the service answers with (spec part 7.4).
 *
 * Every error that leaves the API is an AppError with a stable `code`; the HTTP status and
 * whether a caller may retry follow from the code, so the mapping lives in one place.
 * Bodies are `{"detail": <message>, "code": <code>}`; request-schema failures are the
 * separate 422 shape built in `api/validation-errors.ts`.
 */
import { excerptText } from './excerpt.js';

export const errorCatalogue = {
  config_yaml_invalid: {
    status: 400,
    retryable: false,
    summary: 'YAML parse error on config create or update',
  },
  config_invalid: { status: 400, retryable: false, summary: 'config has validation errors and cannot run' },
  bad_request: { status: 400, retryable: false, summary: 'request is well-formed but cannot be carried out' },
  storage_key_invalid: {
    status: 400,
    retryable: false,
    summary: 'storage key is absolute, escapes or holds NUL',
  },
  search_request_invalid: {
    status: 400,
    retryable: false,
    summary: 'invalid search or chat request (empty query, unknown model, profile or template)',
  },
  template_invalid: { status: 400, retryable: false, summary: 'template validation failure' },
  template_id_mismatch: {
    status: 400,
    retryable: false,
    summary: 'template id in the body differs from the path',
  },
  webhook_url_invalid: {
    status: 400,
    retryable: false,
    summary: 'webhook URL not absolute http(s), or its host cannot be resolved',
  },
  webhook_target_refused: {
    status: 400,
    retryable: false,
    summary: 'webhook target resolves to a forbidden (loopback, private, link-local, metadata) address',
  },
  url_invalid: { status: 400, retryable: false, summary: 'request URL has a bad percent-encoding' },
  unauthorized: { status: 401, retryable: false, summary: 'missing or wrong API key' },
  cross_site_request_refused: {
    status: 403,
    retryable: false,
    summary: 'a state-changing request a browser marked as coming from another site or origin',
  },
  not_found: { status: 404, retryable: false, summary: 'route of the API does not exist' },
  config_not_found: { status: 404, retryable: false, summary: 'config not found or deleted' },
  adapter_not_found: { status: 404, retryable: false, summary: 'adapter type not in the registry' },
  object_not_found: { status: 404, retryable: false, summary: 'storage object or path not found' },
  execution_not_found: { status: 404, retryable: false, summary: 'execution not found' },
  document_not_found: { status: 404, retryable: false, summary: 'document not in the knowledge index' },
  template_not_found: { status: 404, retryable: false, summary: 'chat template not found' },
  webhook_not_found: { status: 404, retryable: false, summary: 'webhook subscription not found' },
  webhook_delivery_not_found: {
    status: 404,
    retryable: false,
    summary: 'webhook delivery not found under this subscription',
  },
  route_not_found: { status: 404, retryable: false, summary: 'route in no active execution' },
  method_not_allowed: { status: 405, retryable: false, summary: 'method not allowed on this path' },
  payload_too_large: { status: 413, retryable: false, summary: 'request body exceeds the body limit' },
  unsupported_media_type: { status: 415, retryable: false, summary: 'request body is not JSON' },
  uri_too_long: {
    status: 414,
    retryable: false,
    summary: 'a path segment of the URL is over its length limit',
  },
  request_timeout: {
    status: 408,
    retryable: true,
    summary: 'the request did not arrive within WEIR_REQUEST_TIMEOUT_MS',
  },
  request_header_too_large: {
    status: 431,
    retryable: false,
    summary: 'request line and headers over the HTTP parser limit (16 KiB)',
  },
  host_not_allowed: {
    status: 421,
    retryable: false,
    summary: 'the Host header names no host this service answers for (WEIR_ALLOWED_HOSTS)',
  },
  request_invalid: { status: 422, retryable: false, summary: 'request schema validation failure' },
  internal_error: { status: 500, retryable: true, summary: 'unexpected server error' },
  chat_generation_failed: { status: 500, retryable: true, summary: 'the language model failed to answer' },
  registry_unavailable: { status: 503, retryable: true, summary: 'adapter registry unavailable' },
  database_unavailable: { status: 503, retryable: true, summary: 'database unavailable' },
  storage_unavailable: { status: 503, retryable: true, summary: 'object storage unavailable' },
  orchestrator_unavailable: { status: 503, retryable: true, summary: 'orchestrator unavailable' },
  configuration_unavailable: { status: 503, retryable: true, summary: 'service configuration unavailable' },
  service_starting: {
    status: 503,
    retryable: true,
    summary:
      'the instance is still loading its pipeline files at start-up (GET /system/ready says when done)',
  },
  event_streams_full: {
    status: 503,
    retryable: true,
    summary: 'this instance has as many event streams open as it allows (WEIR_MAX_EVENT_STREAMS)',
  },
  search_unavailable: {
    status: 503,
    retryable: true,
    summary: 'chat/search service not configured (no database or embedding model)',
  },
  vector_search_unavailable: {
    status: 503,
    retryable: false,
    summary: 'vector search needs pgvector, which this PostgreSQL server lacks',
    warnedAtStart: true,
  },
} as const satisfies Record<
  string,
  {
    status: number;
    retryable: boolean;
    summary: string;
    /**
     * A standing state of the deployment (not a fault of one request) that `weir serve` warns
     * about once at start-up: answering it is not logged as an error each time.
     */
    warnedAtStart?: true;
  }
>;

export type ErrorCode = keyof typeof errorCatalogue;

/** True for a code whose cause is warned about at start-up (see `warnedAtStart`). */
export function isWarnedAtStart(code: ErrorCode): boolean {
  return 'warnedAtStart' in errorCatalogue[code];
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  /** Extra fields merged into the response body (never secrets, never stack traces). */
  readonly body: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { cause?: unknown; body?: Record<string, unknown> } = {},
  ) {
    // Messages name what the client sent (`unknown language "<100 KB>"`): every message and
    // every string of the extra fields is bounded here, once for every throw site.
    super(excerptText(message, MAX_DETAIL_CHARACTERS), { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = errorCatalogue[code].status;
    this.retryable = errorCatalogue[code].retryable;
    this.body =
      options.body === undefined ? undefined : (boundStrings(options.body) as Record<string, unknown>);
  }
}

/**
 * Characters of a `detail` and of each string in the extra fields. Far above any message the
 * service writes itself; a request value inside one is cut to an excerpt.
 */
export const MAX_DETAIL_CHARACTERS = 1000;

/** `value` with every string in it cut to MAX_DETAIL_CHARACTERS (extra fields are small JSON). */
function boundStrings(value: unknown): unknown {
  if (typeof value === 'string') return excerptText(value, MAX_DETAIL_CHARACTERS);
  if (Array.isArray(value)) return value.map(boundStrings);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, boundStrings(item)]));
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/** The `{"detail": ...}` body the API sends for an AppError. */
export function errorBody(error: AppError): Record<string, unknown> {
  return { detail: error.message, code: error.code, ...error.body };
}
