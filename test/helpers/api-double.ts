/** What the loopback API doubles (Confluence, Microsoft Graph) share: JSON answers, start, stop. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export function answerJson(
  response: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

export function listenOnLoopback(server: http.Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
}

export function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

export interface RecordingServer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** Every request received, with the Authorization header it carried. */
  requests: { method: string; url: string; authorization: string | undefined }[];
  close(): Promise<void>;
}

/**
 * A loopback server of another origin that records what reaches it (a host a secret must never
 * be sent to) and answers every request with an empty collection.
 */
export async function startRecordingServer(): Promise<RecordingServer> {
  const requests: RecordingServer['requests'] = [];
  const server = http.createServer((request, response) => {
    requests.push({
      method: request.method ?? '',
      url: request.url ?? '',
      authorization: request.headers.authorization,
    });
    answerJson(response, 200, { results: [], value: [] });
  });
  await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => closeServer(server),
  };
}
