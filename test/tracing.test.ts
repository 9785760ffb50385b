/**
 * OpenTelemetry traces (issue 36 item 2; docs/operations.md, "Traces"): with an OTLP endpoint
 * set, one execution is one trace whose parent links follow the lineage, across the broker.
 * The receiver is a real OTLP/HTTP endpoint on loopback that decodes what the exporter sends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prettyLogTransport } from '../src/serve.js';
import {
  activeTraceparent,
  inMessageSpan,
  logCorrelation,
  startTracing,
  type Tracing,
  tracesEndpoint,
} from '../src/tracing/tracing.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { brokerTargets } from './helpers/brokers.js';
import { databaseTargets } from './helpers/databases.js';
import { startOtlpReceiver } from './helpers/otlp-receiver.js';

describe('tracing settings', () => {
  it('follows the OTel environment conventions for the endpoint and for turning it off', () => {
    expect(tracesEndpoint({})).toBeUndefined();
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toBe(
      'http://collector:4318/v1/traces',
    );
    expect(
      tracesEndpoint({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom',
      }),
    ).toBe('http://traces:4318/custom');
    expect(
      tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBeUndefined();
    expect(
      tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }),
    ).toBeUndefined();
  });

  it('logs JSON unless asked for pretty or on a terminal with the automatic format', () => {
    expect(prettyLogTransport('auto', false)).toEqual({});
    expect(prettyLogTransport('json', true)).toEqual({});
    expect(prettyLogTransport('auto', true)).toMatchObject({ transport: { target: 'pino-pretty' } });
    expect(prettyLogTransport('pretty', false)).toMatchObject({ transport: { target: 'pino-pretty' } });
  });

  it('off, outputs carry no trace context', () => {
    expect(activeTraceparent()).toBeUndefined();
  });
});

const pipeline = `
name: traced-pipeline
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: 3 }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        config: { fail_every: 3, failure: permanent }
        retry: { max_attempts: 1, backoff_ms: 0 }
`;

// STOMP when RabbitMQ is there (CI sets WEIR_TEST_STOMP_URL, so there it always is): the trace
// context must cross a real broker inside the envelope.
const broker = (await brokerTargets()).at(-1);

describe(`one execution is one trace (${broker?.name} broker)`, () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let tracing: Tracing | undefined;
  let test: TestApp;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    tracing = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, 'all');
    test = await createTestApp(databaseTargets()[0] as never, { broker: await broker?.open() });
  });
  afterAll(async () => {
    await test?.close();
    await tracing?.shutdown();
    await receiver?.close();
  });

  it('puts the trace and span ids in log lines written inside a span (pino mixin)', async () => {
    const attributes = { message_id: 'm', execution_id: 'e', route: 'r', stage: 's', adapter: 'a' };
    const seen = await inMessageSpan(undefined, attributes, async () => logCorrelation());
    expect(seen).toMatchObject({
      trace_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      span_id: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    expect(logCorrelation()).toEqual({}); // outside any span
  });

  it('has a span per message per stage whose parent is the span of the message it came from', async () => {
    expect(tracing).toBeDefined();
    const created = await test.app.inject({
      method: 'POST',
      url: '/api/v1/configs',
      payload: { config_yaml: pipeline },
    });
    const run = await test.app.inject({ method: 'POST', url: `/api/v1/configs/${created.json().id}/run` });
    const executionId = run.json().id;
    const waited = await test.app.inject({
      method: 'POST',
      url: `/api/v1/executions/${executionId}/wait`,
      payload: { timeout_seconds: 60 },
    });
    expect(waited.json().status).toBe('completed');
    // A message's span ends when its stage is done with it, after its finish: the fan-out's span
    // waits for the broker's receipts of its outputs, which may come after the sink messages have
    // ended the execution. So wait (flushing) until the four message spans have arrived.
    const spansOf = () =>
      receiver.spans.filter((span) => span.attributes['weir.execution_id'] === executionId);
    for (let attempt = 0; attempt < 100; attempt++) {
      await tracing?.flush();
      if (spansOf().filter((span) => span.attributes['weir.route']).length >= 4) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await tracing?.shutdown(); // flushes the batch processor
    tracing = undefined;

    const ofExecution = spansOf();
    const root = ofExecution.find((span) => span.name === 'run traced-pipeline');
    const generate = ofExecution.filter((span) => span.attributes['weir.route'] === 'generate');
    const sink = ofExecution.filter((span) => span.attributes['weir.route'] === 'sink');
    expect(root).toBeDefined();
    expect(generate).toHaveLength(1);
    expect(sink).toHaveLength(3);
    // One trace, parent links along the lineage: run -> generate -> each sink message.
    for (const span of [...generate, ...sink]) expect(span.traceId).toBe(root?.traceId);
    expect(generate[0]?.parentSpanId).toBe(root?.spanId);
    for (const span of sink) expect(span.parentSpanId).toBe(generate[0]?.spanId);
    expect(generate[0]?.attributes).toMatchObject({
      'weir.adapter': 'synthetic_fanout',
      'weir.stage': 'synthetic_fanout',
      'weir.outcome': 'completed',
    });
    expect(new Set(sink.map((span) => span.attributes['weir.message_id'])).size).toBe(3);
    const outcomes = sink.map((span) => span.attributes['weir.outcome']).sort();
    expect(outcomes).toEqual(['completed', 'completed', 'failed']);
    expect(sink.find((span) => span.attributes['weir.outcome'] === 'failed')?.status?.code).toBe(2); // ERROR
    // The database statements of a message are children of its span.
    const stageSpanIds = new Set([...generate, ...sink].map((span) => span.spanId));
    const statements = receiver.spans.filter(
      (span) => span.parentSpanId && stageSpanIds.has(span.parentSpanId) && span.attributes['db.system.name'],
    );
    expect(statements.length).toBeGreaterThanOrEqual(4);
  });
});
