/** Shared bits of the console: htm bound to Preact, a data-loading hook, small views. */
import htm from 'htm';
import { h } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
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
