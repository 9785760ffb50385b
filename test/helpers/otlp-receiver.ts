/**
 * An OTLP/HTTP traces receiver on loopback (the exporter's default JSON encoding): it decodes
 * what the OpenTelemetry exporter sends, so tests assert on the spans a collector would get.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  /** The exporting process's resource attributes (service.name, ...). */
  resource: Record<string, unknown>;
  status?: { code?: number };
}

type OtlpAttribute = { key: string; value: Record<string, unknown> };

function attributeMap(attributes: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries(
    (attributes ?? []).map((attribute) => [attribute.key, Object.values(attribute.value)[0]]),
  );
}

export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const resourceSpans of body.resourceSpans ?? []) {
          const resource = attributeMap(resourceSpans.resource?.attributes);
          for (const scopeSpans of resourceSpans.scopeSpans ?? [])
            for (const span of scopeSpans.spans ?? [])
              spans.push({ ...span, resource, attributes: attributeMap(span.attributes) });
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
