/**
 * The JSON body parser: Fastify's own (secure-json-parse, which refuses `__proto__` and
 * `constructor` poisoning) behind a nesting bound. JSON nested thousands of levels deep
 * parses, but then overflows the stack of whatever walks it (the schema validator, the error
 * serialiser, a database's jsonb); no request of this API needs more than a few levels.
 */
import type { FastifyInstance } from 'fastify';

/** Arrays and objects inside each other, at most. */
export const MAX_JSON_DEPTH = 64;

export function installJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const depth = nestingDepth(body as string);
    if (depth > MAX_JSON_DEPTH) {
      const error = new Error(`JSON nested ${depth} levels deep; at most ${MAX_JSON_DEPTH} are accepted`);
      // Answered like any other unreadable JSON body (422 json_invalid, error-handler.ts).
      done(Object.assign(error, { code: 'FST_ERR_CTP_INVALID_JSON_BODY', statusCode: 400 }), undefined);
      return;
    }
    parse(request, body as string, done);
  });
}

/** The deepest nesting of arrays and objects in JSON text, strings skipped; one pass. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c)
        index++; // a backslash escapes the next character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (code === 0x5d || code === 0x7d) depth--;
  }
  return deepest;
}
