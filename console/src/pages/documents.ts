/**
 * Documents: what the knowledge index holds. Per config, the runs that indexed (GET
 * /chat/sources: documents, segments, last indexed); then the documents themselves (GET
 * /chat/documents), filtered by config, language and source, each with its title, language,
 * segment count and last update, and a delete that removes the source from the index (DELETE
 * /chat/documents/{id}; the stored objects stay).
 */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { CopyId, ErrorText, html, plural, SourceLink, useLoad, when } from '../ui.js';

export interface IndexedSource {
  execution_id: string;
  config_id: string | null;
  config_name: string | null;
  tag: string | null;
  document_count: number;
  segment_count: number;
  indexed_at: string | null;
}
interface IndexedDocument {
  document_id: string;
  source_key: string;
  url: string | null;
  title: string | null;
  language: string;
  storage_key: string | null;
  execution_id: string;
  config_id: string | null;
  config_name: string | null;
  tag: string | null;
  segment_count: number;
  updated_at: string;
}
export interface ConfigSummary {
  config_id: string;
  name: string;
  runs: number;
  documents: number;
  segments: number;
  indexed_at: string | null;
}

const PAGE = 50;

/** The runs that indexed, summed per config (a config indexed by several runs is one row). */
export function summariseByConfig(sources: readonly IndexedSource[]): ConfigSummary[] {
  const byConfig = new Map<string, ConfigSummary>();
  for (const source of sources) {
    const id = source.config_id ?? '';
    const summary = byConfig.get(id) ?? {
      config_id: id,
      name: source.config_name ?? 'deleted config',
      runs: 0,
      documents: 0,
      segments: 0,
      indexed_at: null,
    };
    summary.runs += 1;
    summary.documents += source.document_count;
    summary.segments += source.segment_count;
    if (source.indexed_at && (!summary.indexed_at || source.indexed_at > summary.indexed_at))
      summary.indexed_at = source.indexed_at;
    byConfig.set(id, summary);
  }
  return [...byConfig.values()];
}

/** Languages search knows, for the filters (GET /chat/capabilities). */
export function useLanguages() {
  return useLoad(
    () =>
      api<{ languages: Array<{ code: string; text_search_config: string }> }>('/chat/capabilities').then(
        (answer) => answer.languages,
      ),
    [],
  );
}

export function Documents() {
  const sources = useLoad(
    () => api<{ sources: IndexedSource[] }>('/chat/sources?limit=1000').then((answer) => answer.sources),
    [],
  );
  const languages = useLanguages();
  const [configId, setConfigId] = useState('');
  const [language, setLanguage] = useState('');
  const [source, setSource] = useState('');
  const [offset, setOffset] = useState(0);
  const query = new URLSearchParams({ limit: String(PAGE), offset: String(offset) });
  if (configId) query.set('config_id', configId);
  if (language) query.set('language', language);
  if (source.trim()) query.set('source', source.trim());
  const documents = useLoad(
    // The signal drops the answer to a filter already typed over.
    (signal) => api<{ documents: IndexedDocument[]; total: number }>(`/chat/documents?${query}`, { signal }),
    [query.toString()],
  );
  const [confirming, setConfirming] = useState<string | undefined>(undefined);
  const [message, setMessage] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const filter = (change: () => void) => {
    change();
    setOffset(0);
  };
  async function remove(document: IndexedDocument) {
    setError(undefined);
    try {
      const removed = await api<{ removed_segments: number }>(`/chat/documents/${document.document_id}`, {
        method: 'DELETE',
      });
      setMessage(
        `Removed ${document.title ?? document.source_key} (${plural(removed.removed_segments, 'segment')}) from the index.`,
      );
      setConfirming(undefined);
      documents.reload();
      sources.reload();
    } catch (failure) {
      setError((failure as Error).message);
    }
  }
  const summaries = summariseByConfig(sources.data ?? []);
  const page = documents.data;
  return html`<section>
    <h1>Documents</h1>
    <${ErrorText} error=${sources.error ?? documents.error ?? error} />
    ${message ? html`<p class="ok" role="status">${message}</p>` : ''}
    <h2>Indexed per config</h2>
    ${sources.data && summaries.length === 0 ? html`<p class="muted">Nothing is indexed yet.</p>` : ''}
    <div class="table-wrap"><table aria-label="Indexed per config">
      <thead><tr><th>Config</th><th>Runs</th><th>Documents</th><th>Segments</th><th>Last indexed</th></tr></thead>
      <tbody>
        ${summaries.map(
          (summary) => html`<tr>
            <td><button type="button" class="link" title="Show its documents" onClick=${() => filter(() => setConfigId(summary.config_id))}>${summary.name}</button></td>
            <td>${summary.runs}</td><td>${summary.documents}</td><td>${summary.segments}</td><td>${when(summary.indexed_at)}</td>
          </tr>`,
        )}
      </tbody>
    </table></div>
    <h2>Documents ${page ? html`<span class="muted">(${page.total})</span>` : ''}</h2>
    <form class="inline filters" role="search" aria-label="Document filters" onSubmit=${(event: Event) => event.preventDefault()}>
      <label for="documents-config">Config</label>
      <select id="documents-config" value=${configId} onChange=${(event: Event) => filter(() => setConfigId((event.target as HTMLSelectElement).value))}>
        <option value="">Any config</option>
        ${summaries.map((summary) => html`<option value=${summary.config_id}>${summary.name}</option>`)}
      </select>
      <label for="documents-language">Language</label>
      <select id="documents-language" value=${language} onChange=${(event: Event) => filter(() => setLanguage((event.target as HTMLSelectElement).value))}>
        <option value="">Any language</option>
        ${(languages.data ?? []).map((item) => html`<option value=${item.code}>${item.code} (${item.text_search_config})</option>`)}
      </select>
      <label for="documents-source">Source</label>
      <input id="documents-source" type="search" placeholder="part of the URL, key or title" value=${source}
        onInput=${(event: Event) => filter(() => setSource((event.target as HTMLInputElement).value))} />
    </form>
    <div class="table-wrap"><table aria-label="Documents">
      <thead><tr><th>Source</th><th>Language</th><th>Config</th><th>Segments</th><th>Updated</th><th></th></tr></thead>
      <tbody>
        ${(page?.documents ?? []).map(
          (document) => html`<tr>
            <td class="clip">
              <${SourceLink} source=${{ url: document.url, object_key: document.storage_key ?? (document.url ? null : document.source_key) }}>${document.title ?? document.source_key}<//>
              <div class="muted clip" title=${document.source_key}>${document.source_key}</div>
            </td>
            <td>${document.language}</td>
            <td>${document.config_name ?? '—'}${document.tag ? html` <span class="tag">${document.tag}</span>` : ''} <${CopyId} id=${document.execution_id} label="execution id" /></td>
            <td>${document.segment_count}</td>
            <td>${when(document.updated_at)}</td>
            <td>${
              confirming === document.document_id
                ? html`<div class="actions row-actions">
                    <button type="button" class="danger" onClick=${() => remove(document)}>Remove from index</button>
                    <button type="button" onClick=${() => setConfirming(undefined)}>Keep</button>
                  </div>`
                : html`<button type="button" class="danger" aria-label=${`Delete ${document.title ?? document.source_key}`} onClick=${() => setConfirming(document.document_id)}>Delete…</button>`
            }</td>
          </tr>`,
        )}
      </tbody>
    </table></div>
    ${page && page.total === 0 ? html`<p class="muted">No document matches.</p>` : ''}
    ${
      page && page.total > PAGE
        ? html`<div class="actions">
            <button type="button" disabled=${offset === 0} onClick=${() => setOffset(Math.max(0, offset - PAGE))}>Previous</button>
            <span class="muted">${offset + 1}–${Math.min(offset + PAGE, page.total)} of ${page.total}</span>
            <button type="button" disabled=${offset + PAGE >= page.total} onClick=${() => setOffset(offset + PAGE)}>Next</button>
          </div>`
        : ''
    }
  </section>`;
}
