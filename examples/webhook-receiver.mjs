#!/usr/bin/env node
/**
 * A webhook receiver to try Weir's webhooks on one machine (README, "Using it"): listens on
 * http://127.0.0.1:<port>/ (default 9000), answers every POST with 204, and prints each
 * delivery's event, id and body. Given the subscription's secret, it checks X-Svc-Signature
 * (sha256=<hex HMAC-SHA256(secret, raw body)>, docs/webhooks.md) and says whether it matches.
 *
 *   node examples/webhook-receiver.mjs [port] [secret]
 *
 * Weir refuses loopback targets unless the server runs with WEIR_WEBHOOK_ALLOWED_CIDRS=127.0.0.1/32.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 9000);
const secret = process.argv[3];

function signatureMatches(header, body) {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    if (request.method !== 'POST') {
      response.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const body = Buffer.concat(chunks);
    const signature = secret
      ? ` signature ${signatureMatches(request.headers['x-svc-signature'], body) ? 'valid' : 'INVALID'}`
      : '';
    console.log(
      `${request.headers['x-svc-event'] ?? 'POST'} delivery ${request.headers['x-svc-delivery'] ?? '-'}${signature}: ${body.toString('utf8')}`,
    );
    response.writeHead(204).end();
  });
});

server.listen(port, '127.0.0.1', () => {
  console.log(`webhook receiver on http://127.0.0.1:${port}/ (Ctrl-C to stop)`);
});
