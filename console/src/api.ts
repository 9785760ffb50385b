/**
 * The console's only way to the service: the public API, with the API key the person gave
 * (kept for the browser session). A 401 asks for a key again.
 */
const KEY = 'weir-api-key';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(describe(status, body));
  }
}

function describe(status: number, body: unknown): string {
  if (body && typeof body === 'object' && 'detail' in body) {
    const detail = (body as { detail: unknown }).detail;
    if (typeof detail === 'string') return detail;
    if (Array.isArray(detail))
      return detail.map((entry) => `${(entry.loc ?? []).join('.')}: ${entry.msg}`).join('; ');
  }
  return `HTTP ${status}`;
}

export const apiKey = {
  get: () => sessionStorage.getItem(KEY) ?? '',
  set: (value: string) => sessionStorage.setItem(KEY, value),
};

/** Told when the service answers 401 (no key, or a wrong one): the layout then asks for one. */
let missingKey: ((missing: boolean) => void) | undefined;
export function watchMissingKey(callback: (missing: boolean) => void) {
  missingKey = callback;
}

export function headers(extra: Record<string, string> = {}): Record<string, string> {
  const key = apiKey.get();
  return { ...extra, ...(key ? { authorization: `Bearer ${key}` } : {}) };
}

export async function api<T = unknown>(
  path: string,
  options: { method?: string; body?: unknown; signal?: AbortSignal } = {},
): Promise<T> {
  const response = await fetch(`/api/v1${path}`, {
    method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
    headers: headers(options.body === undefined ? {} : { 'content-type': 'application/json' }),
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: options.signal,
  });
  if (response.status === 401) missingKey?.(true);
  const text = await response.text();
  const body = text ? safeJson(text) : undefined;
  if (!response.ok) throw new ApiError(response.status, body);
  return body as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Server-sent events of a POST (the chat stream), each handed over as it arrives. */
export async function postEvents(
  path: string,
  body: unknown,
  onEvent: (event: string, data: unknown) => void,
  signal?: AbortSignal,
): Promise<void> {
  await readEvents(
    path,
    {
      method: 'POST',
      headers: headers({ 'content-type': 'application/json', accept: 'text/event-stream' }),
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    },
    onEvent,
  );
}

/**
 * Reads a server-sent event stream with fetch (EventSource cannot send the API key header),
 * handing each event over as it arrives; resolves when the stream ends.
 */
async function readEvents(
  path: string,
  init: RequestInit,
  onEvent: (event: string, data: unknown) => void,
): Promise<void> {
  const response = await fetch(`/api/v1${path}`, init);
  if (response.status === 401) missingKey?.(true);
  if (!response.ok || !response.body) throw new ApiError(response.status, safeJson(await response.text()));
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += value;
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length > 0) onEvent(event, safeJson(data.join('\n')));
      end = buffer.indexOf('\n\n');
    }
  }
}

export interface ExecutionRecord {
  id: string;
  status: string;
  [field: string]: unknown;
}
/** Called with each changed execution, and with undefined after a reconnection (changes may be missed). */
type ExecutionListener = (execution: ExecutionRecord | undefined) => void;

const executionListeners = new Set<ExecutionListener>();
let executionStream: AbortController | undefined;

/**
 * Every execution as it changes, from GET /executions/events: one stream per tab, shared by
 * every page listening, opened with the first listener and closed with the last. A dropped
 * stream (server restart, network) is opened again after a pause, and a refused one (503:
 * the instance is at its stream limit) later still.
 */
export function listenToExecutions(listener: ExecutionListener): () => void {
  executionListeners.add(listener);
  if (!executionStream) openExecutionStream();
  return () => {
    executionListeners.delete(listener);
    if (executionListeners.size === 0) {
      executionStream?.abort();
      executionStream = undefined;
    }
  };
}

function openExecutionStream(): void {
  const controller = new AbortController();
  executionStream = controller;
  readEvents(
    '/executions/events',
    { headers: headers({ accept: 'text/event-stream' }), signal: controller.signal },
    (event, data) => {
      if (event !== 'execution') return;
      for (const listener of executionListeners) listener(data as ExecutionRecord);
    },
  )
    .then(() => 2000)
    .catch((error: unknown) => (error instanceof ApiError && error.status === 503 ? 15_000 : 3000))
    .then((pauseMs) => {
      if (controller.signal.aborted || executionStream !== controller) return;
      setTimeout(() => {
        if (executionStream !== controller || controller.signal.aborted) return;
        openExecutionStream();
        for (const listener of executionListeners) listener(undefined);
      }, pauseMs);
    });
}

/** The object URL a browser can download (the key goes in a fetch, not the URL). */
export async function download(key: string): Promise<void> {
  const response = await fetch(`/api/v1/storage/objects/${encodeURIComponent(key)}`, { headers: headers() });
  if (!response.ok) throw new ApiError(response.status, safeJson(await response.text()));
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = key.split('/').pop() ?? 'object';
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export async function objectText(key: string, maxBytes = 256 * 1024): Promise<string> {
  const response = await fetch(`/api/v1/storage/objects/${encodeURIComponent(key)}`, {
    headers: headers({ range: `bytes=0-${maxBytes - 1}` }),
  });
  if (!response.ok) throw new ApiError(response.status, safeJson(await response.text()));
  return response.text();
}
