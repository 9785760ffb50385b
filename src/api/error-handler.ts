/**
 * One place that turns any thrown error into a response: AppError by its catalogue entry,
 * request-schema failures as the 422 list, body-parser failures by their meaning, an unreachable
 * database as 503 database_unavailable, anything else as a 500 whose body never holds a stack
 * trace or an internal message.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/database-errors.js';
import { AppError, errorBody, isAppError, isWarnedAtStart } from '../errors.js';
import { excerptText } from '../excerpt.js';
import { setSecurityHeaders } from './browser-headers.js';
import { type SchemaError, toValidationErrors } from './validation-errors.js';

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.validation) {
      const detail = toValidationErrors(error.validation as SchemaError[], error.validationContext ?? 'body');
      return reply.status(422).send({ detail });
    }
    const mapped = mapFrameworkError(error);
    if (mapped) return reply.status(mapped.status).send(mapped.body);
    if (isAppError(error)) {
      // A standing state warned about at start-up (no pgvector) is not a new fault per request;
      // the request's own log line still records the status.
      if (error.status >= 500 && !isWarnedAtStart(error.code))
        request.log.error({ err: error }, error.message);
      return reply.status(error.status).send(errorBody(error));
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.status(error.statusCode).send(errorBody(new AppError('bad_request', error.message)));
    }
    if (isDatabaseUnavailable(error)) {
      request.log.error({ err: error }, 'database unavailable');
      return reply
        .status(503)
        .send(errorBody(new AppError('database_unavailable', 'the database is not available; retry later')));
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send(errorBody(new AppError('internal_error', 'Internal Server Error')));
  });

  app.setNotFoundHandler((request, reply) => {
    // The path as an excerpt: a path of many kilobytes must not come back whole.
    const shown = excerptText(request.url.split('?')[0] ?? '', MAX_PATH_SHOWN);
    reply.status(404).send(errorBody(new AppError('not_found', `no endpoint ${request.method} ${shown}`)));
  });
}

/** How much of an unknown path a 404 echoes. */
const MAX_PATH_SHOWN = 200;

/**
 * Errors the router raises before any route or hook runs (a bad percent-encoding, a path
 * segment over the router's length limit): Fastify's own `{error, message}` bodies would
 * leave the catalogue's shape, and echo the whole URL. Passed as `frameworkErrors`.
 */
export function answerFrameworkError(
  error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  const appError =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new AppError(
          'uri_too_long',
          'a path segment of the URL is longer than the router takes (100 characters)',
        )
      : error.code === 'FST_ERR_BAD_URL'
        ? new AppError('url_invalid', 'the URL holds a bad percent-encoding')
        : new AppError('internal_error', 'Internal Server Error');
  // The router answers these before any hook, so the headers every answer carries are set here.
  setSecurityHeaders(reply.raw, '');
  reply.status(appError.status).send(errorBody(appError));
}

/**
 * Errors Node's HTTP parser raises before Fastify sees a request: one that did not arrive
 * within the request timeout (a client trickling bytes), a request line and headers over the
 * parser's 16 KiB, bytes that are not HTTP. Fastify's own answer is `{error, message,
 * statusCode}`; this one is the catalogue's `{detail, code}`. There is no request and no reply,
 * only the socket: the answer is written raw and the connection closed. Passed as
 * `clientErrorHandler`.
 */
export function answerClientError(error: ConnectionError, socket: Socket): void {
  // The client is gone (or the answer is under way): nothing can be said to it.
  if ((error as NodeJS.ErrnoException).code === 'ECONNRESET' || socket.destroyed) return;
  const appError = clientErrorFor((error as NodeJS.ErrnoException).code);
  if (socket.writable) {
    const body = JSON.stringify(errorBody(appError));
    socket.write(
      `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

function clientErrorFor(code: string | undefined): AppError {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('request_timeout', 'the request did not arrive in time');
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(
        'request_header_too_large',
        'the request line and headers are over 16 KiB (long values belong in the body)',
      );
    default:
      return new AppError('bad_request', 'the request is not valid HTTP/1.1');
  }
}

function mapFrameworkError(error: FastifyError): { status: number; body: unknown } | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return {
        status: 422,
        body: { detail: [{ loc: ['body'], msg: 'Field required', type: 'missing', input: null }] },
      };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return {
        status: 422,
        body: {
          detail: [
            {
              loc: ['body'],
              msg: 'JSON decode error',
              type: 'json_invalid',
              input: null,
              ctx: { error: error.message },
            },
          ],
        },
      };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: errorBody(new AppError('payload_too_large', error.message)) };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        status: 415,
        body: errorBody(new AppError('unsupported_media_type', 'send the body as application/json')),
      };
    default:
      return undefined;
  }
}
