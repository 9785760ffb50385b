/**
 * OpenTelemetry traces (docs/operations.md, "Traces"), off unless an OTLP endpoint is set
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_SDK_DISABLED and
 * OTEL_TRACES_EXPORTER=none respected, as the OTel environment conventions say). Off, every
 * function here is the API's no-op: no span is made and no envelope grows, and the SDK (the
 * exporter, the provider, the instrumentation: about 1 MB of JavaScript, 0.5 s and 20 MB at
 * start) is never imported.
 *
 * One execution is one trace: the run starts a span, its init message carries that span's W3C
 * `traceparent` in the envelope (so it crosses the broker and survives a republish from the
 * outbox), and every stage's span for a message is the child of the span that produced the
 * message, so parent links follow the lineage across api and worker processes.
 */
import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { statementKind } from '../metrics/metrics.js';
import { SERVICE_VERSION } from '../version.js';

const tracer = trace.getTracer('weir', SERVICE_VERSION);
let enabled = false;

export interface Tracing {
  /** Sends the spans ended so far that are still buffered, and goes on. */
  flush(): Promise<void>;
  /** Sends the spans still buffered and stops (call before the process exits). */
  shutdown(): Promise<void>;
}

/** The traces endpoint the environment names, or undefined when tracing stays off. */
export function tracesEndpoint(environment: Record<string, string | undefined>): string | undefined {
  if (environment.OTEL_SDK_DISABLED === 'true' || environment.OTEL_TRACES_EXPORTER === 'none')
    return undefined;
  const specific = environment.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (specific) return specific;
  const base = environment.OTEL_EXPORTER_OTLP_ENDPOINT;
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}

/**
 * Starts tracing when the environment names an endpoint; once per process (the provider is
 * global). `role` goes into the resource, beside OTEL_SERVICE_NAME (default `weir`) and
 * OTEL_RESOURCE_ATTRIBUTES.
 */
export async function startTracing(
  environment: Record<string, string | undefined>,
  role: string,
): Promise<Tracing | undefined> {
  const url = tracesEndpoint(environment);
  if (!url || enabled) return undefined;
  const [
    { OTLPTraceExporter },
    { registerInstrumentations },
    { UndiciInstrumentation },
    { detectResources, envDetector, resourceFromAttributes },
    { BatchSpanProcessor, NodeTracerProvider },
  ] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-undici'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-node'),
  ]);
  if (enabled) return undefined; // another call started it while these loaded
  const resource = resourceFromAttributes({
    'service.name': environment.OTEL_SERVICE_NAME ?? 'weir',
    'service.version': SERVICE_VERSION,
    'weir.role': role,
  }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  // Sets the async-context manager and the W3C trace-context propagator.
  provider.register();
  // Outbound HTTP (src/http/ is all undici) through undici's diagnostics channels.
  const unregister = registerInstrumentations({ instrumentations: [new UndiciInstrumentation()] });
  enabled = true;
  return {
    flush: () => provider.forceFlush(),
    async shutdown() {
      unregister();
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
      enabled = false;
    },
  };
}

export function tracingEnabled(): boolean {
  return enabled;
}

/** The W3C traceparent of `span` (undefined when tracing is off). */
export function traceparentOf(span: Span): string | undefined {
  if (!enabled) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
  return carrier.traceparent;
}

function parentContext(traceparent: string | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}

/** The span of an execution's start: the root of its trace. */
export function startExecutionSpan(attributes: {
  execution_id: string;
  config_id: string;
  config_name?: string;
}): Span {
  return tracer.startSpan(`run ${attributes.config_name ?? attributes.config_id}`, {
    kind: SpanKind.PRODUCER,
    attributes: {
      'weir.execution_id': attributes.execution_id,
      'weir.config_id': attributes.config_id,
    },
  });
}

export interface MessageSpanAttributes {
  message_id: string;
  execution_id: string;
  route: string;
  stage: string;
  adapter: string;
}

/**
 * Runs `work` in the span of one message at one stage, the child of the span that made the
 * message; the adapter's outbound calls and the database statements become its children.
 */
export async function inMessageSpan<T>(
  traceparent: string | undefined,
  attributes: MessageSpanAttributes,
  work: () => Promise<T>,
): Promise<T> {
  if (!enabled) return work();
  const span = tracer.startSpan(
    `${attributes.route}/${attributes.stage}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'weir.message_id': attributes.message_id,
        'weir.execution_id': attributes.execution_id,
        'weir.route': attributes.route,
        'weir.stage': attributes.stage,
        'weir.adapter': attributes.adapter,
      },
    },
    parentContext(traceparent),
  );
  try {
    return await context.with(trace.setSpan(context.active(), span), work);
  } catch (error) {
    span.recordException(error as Error);
    throw error;
  } finally {
    span.end();
  }
}

/** The outcome of the message the active span is about. */
export function recordMessageOutcome(status: string, error: string | null): void {
  if (!enabled) return;
  const span = trace.getActiveSpan();
  if (!span) return;
  span.setAttribute('weir.outcome', status);
  if (status === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: error ?? 'failed' });
}

/** The traceparent outputs of the active message carry (undefined when off). */
export function activeTraceparent(): string | undefined {
  if (!enabled) return undefined;
  const span = trace.getActiveSpan();
  return span ? traceparentOf(span) : undefined;
}

/** A database statement as a span of the active context, after the fact (Kysely's log hook). */
export function recordStatementSpan(sqlText: string, seconds: number, error: unknown): void {
  if (!enabled || !trace.getActiveSpan()) return;
  // Named only when a span is made: with tracing off a statement costs no parsing here.
  const statement = statementKind(sqlText);
  const end = Date.now();
  const span = tracer.startSpan(statement, {
    kind: SpanKind.CLIENT,
    startTime: end - seconds * 1000,
    attributes: { 'db.system.name': 'postgresql', 'db.operation.name': statement },
  });
  if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
  span.end(end);
}

/** Trace and span ids for log lines (pino's mixin), when a span is active. */
export function logCorrelation(): Record<string, string> {
  if (!enabled) return {};
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : {};
}
