/**
 * A real webhook receiver on loopback for tests. Every request is verified with libraries
 * independent of Weir's signing code: @octokit/webhooks-methods for `X-Svc-Signature: sha256=`
 * and the `standardwebhooks` package for `webhook-id` / `webhook-timestamp` /
 * `webhook-signature`. Answers can be scripted (status, headers such as Retry-After, or no
 * answer at all, which the dispatcher sees as a timeout); unscripted requests get 200.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verify as verifySha256 } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { standardWebhookSecret } from '../../src/webhooks/signing.js';

export type ScriptedAnswer =
  | { status: number; headers?: Record<string, string>; body?: string }
  | { hang: true };

export interface ReceivedDelivery {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: {
    id: string;
    type: string;
    created_at: string;
    data: Record<string, unknown>;
    metadata: Record<string, unknown>;
  };
  /** Both signatures checked by the independent verifiers. */
  verified: boolean;
  verificationError: string | null;
  answeredWith: number | 'hang';
}

export interface WebhookReceiver {
  url: string;
  secret: string;
  deliveries: ReceivedDelivery[];
  /** Answers for the next requests, in order. */
  script(...answers: ScriptedAnswer[]): void;
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(secret = 'receiver-secret-0123456789'): Promise<WebhookReceiver> {
  const deliveries: ReceivedDelivery[] = [];
  const scripted: ScriptedAnswer[] = [];
  const hanging = new Set<http.ServerResponse>();
  const standard = new Webhook(standardWebhookSecret(secret));

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let verificationError: string | null = null;
        const signature = String(request.headers['x-svc-signature'] ?? '');
        if (!(await verifySha256(secret, body, signature).catch(() => false))) {
          verificationError = 'X-Svc-Signature does not verify';
        }
        try {
          standard.verify(body, request.headers as Record<string, string>);
        } catch (error) {
          verificationError ??= `standard webhooks: ${(error as Error).message}`;
        }
        const answer = scripted.shift() ?? { status: 200 };
        let json: ReceivedDelivery['json'];
        try {
          json = JSON.parse(body);
        } catch {
          json = { id: '', type: '', created_at: '', data: {}, metadata: {} };
          verificationError ??= 'body is not JSON';
        }
        deliveries.push({
          headers: request.headers,
          body,
          json,
          verified: verificationError === null,
          verificationError,
          answeredWith: 'hang' in answer ? 'hang' : answer.status,
        });
        if ('hang' in answer) {
          hanging.add(response);
          return;
        }
        response.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        response.end(answer.body ?? `answered ${answer.status}`);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/hooks/weir`,
    secret,
    deliveries,
    script(...answers) {
      scripted.push(...answers);
    },
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (deliveries.length < count) {
        if (Date.now() > deadline) {
          throw new Error(`receiver got ${deliveries.length} deliveries, expected ${count}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return deliveries;
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
