/**
 * Response serializers compiled on a route's first answer instead of at start-up.
 *
 * Fastify compiles a fast-json-stringify function for every response schema of every route when
 * the app becomes ready: about a second of CPU and some 35 MB of resident memory at start-up
 * here (docs/benchmarks.md, "Start-up, first queries and idle memory"), most of it for routes an instance may
 * never answer. The same compiler, with the same options and shared schemas, runs instead when
 * a route first sends a body with that status; what is sent is identical.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type RouteDefinition = Parameters<ReturnType<SerializerFactory>>[0];

/**
 * The probes' routes, compiled as the app gets ready: `weir serve` gets it ready while the
 * database opens (issue 35), and the first health answer after it listens then does not wait
 * for its compilation.
 */
const compiledAtStart = /\/system\/(health|ready)$/;

/** For Fastify's `schemaController.compilersFactory.buildSerializer`. */
export const buildLazySerializer: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route: RouteDefinition) => {
    let serialize = compiledAtStart.test(route.url) ? compile(route) : undefined;
    return (document: unknown) => {
      serialize ??= compile(route);
      return serialize(document);
    };
  };
};
