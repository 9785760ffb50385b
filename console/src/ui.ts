/** Shared bits of the console: htm bound to Preact, a data-loading hook, small views. */
import htm from 'htm';
import { h } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type ExecutionRecord, listenToExecutions } from './api.js';
import { type CitedSource, linkUrl, sourceHref } from './links.js';

export const html = htm.bind(h);

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/** Loads with `load` when `deps` change, again on `reload()`, and every `pollMs` if given. */
export function useLoad<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: unknown[],
  pollMs?: number,
): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  // Runs again when the caller's `deps` change (or on reload): they are the caller's to name.
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = () => {
      loadRef
        .current(controller.signal)
        .then((data) => setState({ data, loading: false }))
        .catch((error: Error) => {
          if (!controller.signal.aborted)
            setState((previous) => ({ ...previous, error: error.message, loading: false }));
        })
        .finally(() => {
          if (pollMs && !controller.signal.aborted) timer = setTimeout(run, pollMs);
        });
    };
    run();
    return () => {
      controller.abort();
      if (timer) clearTimeout(timer);
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((value) => value + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/**
 * Live updates instead of polling: `onChange` runs when executions change (the shared
 * GET /executions/events stream) with the latest record of each that changed, or with
 * undefined after a reconnection (changes may have been missed: reload). At most one call per
 * `throttleMs`; the last change of a burst is never dropped.
 */
export function useExecutionEvents(
  onChange: (executions: ExecutionRecord[] | undefined) => void,
  throttleMs = 500,
): void {
  const callback = useRef(onChange);
  callback.current = onChange;
  useEffect(() => {
    let last = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let batch: Map<string, ExecutionRecord> | undefined = new Map();
    const fire = () => {
      timer = undefined;
      last = Date.now();
      const records = batch ? [...batch.values()] : undefined;
      batch = new Map();
      callback.current(records);
    };
    const stop = listenToExecutions((execution) => {
      if (!execution) batch = undefined;
      else batch?.set(execution.id, execution);
      timer ??= setTimeout(fire, Math.max(0, last + throttleMs - Date.now()));
    });
    return () => {
      stop();
      if (timer) clearTimeout(timer);
    };
  }, [throttleMs]);
}

export function ErrorText({ error }: { error: string | undefined }) {
  return error ? html`<p class="error" role="alert">${error}</p>` : null;
}

export function Status({ status }: { status: string }) {
  return html`<span class=${`status status-${status}`}>${status}</span>`;
}

/**
 * How an execution ended: Weir's outcome (succeeded, partial, failed, empty) once it has one,
 * else its status (running, or an execution from before outcomes were kept). A partial or empty
 * run is never shown as green; the spec's status stays in the title.
 */
export function RunState({ status, outcome }: { status: string; outcome?: string | null | undefined }) {
  if (!outcome || status === 'running') return html`<${Status} status=${status} />`;
  const label = status === 'cancelled' ? `cancelled (${outcome})` : outcome;
  return html`<span class=${`status status-${status === 'cancelled' ? 'cancelled' : outcome}`} title=${`status: ${status}`}
    >${label}</span
  >`;
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

export function short(id: string): string {
  return id.length > 13 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id;
}

/**
 * A link to a page outside the console made from data (a source URL): a link only when the URL
 * is http(s) or a path of the console's own origin (`linkUrl`), else its text alone. Opens in
 * a new tab without a referrer.
 */
export function ExternalLink({ url, children }: { url: string | null | undefined; children: unknown }) {
  const href = linkUrl(url);
  return href
    ? html`<a href=${href} target="_blank" rel="noreferrer">${children}</a>`
    : html`<span class="unlinked">${children}</span>`;
}

/**
 * A search result's or citation's source (`sourceHref`): its http(s) origin in a new tab, or
 * the console's view of the object the service stored; its text alone when neither exists.
 */
export function SourceLink({ source, children }: { source: CitedSource; children: unknown }) {
  const href = sourceHref(source);
  return href?.startsWith('#')
    ? html`<a href=${href}>${children}</a>`
    : html`<${ExternalLink} url=${href}>${children}<//>`;
}

/** `1 error`, `2 errors`. */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : nouns}`;
}

/** 850 ms, 12 s, 4 min 05 s, 2 h 03 min. */
export function formatDuration(milliseconds: number): string {
  if (milliseconds < 1000) return `${Math.max(0, Math.round(milliseconds))} ms`;
  const seconds = Math.round(milliseconds / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${String(seconds % 60).padStart(2, '0')} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** An identifier shown short, whole in its title, copied to the clipboard on a click. */
export function CopyId({ id, label }: { id: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const copy = () =>
    navigator.clipboard
      ?.writeText(id)
      .then(() => {
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      })
      .catch(() => {});
  return html`<button type="button" class="copy-id" title=${`${id} (click to copy)`} aria-label=${`Copy ${label} ${id}`} onClick=${copy}
    ><code>${short(id)}</code>${copied ? ' copied' : ''}</button
  >`;
}
