/**
 * Responses whose body is not JSON, in the `content` form that both Fastify and the OpenAPI
 * document understand: without it a 200 is documented as `application/json` (or not at all),
 * and a client generated from /openapi.json would try to parse bytes or an event stream as JSON.
 */
import { Type } from 'typebox';

/** Server-sent events (spec 6.3, 6.4): `event:` and `data:` lines, blank-line separated. */
export const eventStreamResponse = (description: string) => ({
  description,
  content: {
    'text/event-stream': {
      schema: Type.String({ description: 'a stream of server-sent events (text/event-stream)' }),
    },
  },
});

const bytes = Type.String({ format: 'binary', description: "the object's bytes" });

/**
 * A stored object's bytes, served with the object's own content type (for example text/markdown
 * or application/json), hence the any-type media range; application/octet-stream is the type of
 * an object stored without one (and of the embedding vectors).
 */
export const objectBytesResponse = (description: string) => ({
  description,
  content: { 'application/octet-stream': { schema: bytes }, '*/*': { schema: bytes } },
});
