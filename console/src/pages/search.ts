/**
 * Search: keyword, vector and RRF side by side for one query, with RRF's component breakdown,
 * narrowed by config, language and source (the run that indexed it: the spec's `sources` are
 * execution ids, and a config's are the runs of it that indexed something).
 */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorText, html, SourceLink, useLoad, when } from '../ui.js';
import { type IndexedSource, summariseByConfig, useLanguages } from './documents.js';

interface Result {
  rank: number;
  score: number;
  text: string;
  source: {
    url: string | null;
    object_key: string | null;
    link: string | null;
    title: string | null;
    heading_path: string[];
  };
  components: { ranking: string; rank: number | null; contribution?: number }[];
}
type Mode = 'keyword' | 'vector' | 'rrf';
const modes: Mode[] = ['keyword', 'vector', 'rrf'];

/** The execution ids a search is narrowed to: one run, or every run of one config; none = all. */
function sourcesFor(indexed: readonly IndexedSource[], configId: string, executionId: string): string[] {
  if (executionId) return [executionId];
  if (configId)
    return indexed
      .filter((source) => (source.config_id ?? '') === configId)
      .map((source) => source.execution_id);
  return [];
}

export function Search() {
  const [query, setQuery] = useState('');
  const [results, setResults] = useState<Partial<Record<Mode, Result[] | string>>>({});
  const indexed = useLoad(
    () => api<{ sources: IndexedSource[] }>('/chat/sources?limit=1000').then((answer) => answer.sources),
    [],
  );
  const languages = useLanguages();
  const [configId, setConfigId] = useState('');
  const [language, setLanguage] = useState('');
  const [executionId, setExecutionId] = useState('');
  const runs = (indexed.data ?? []).filter((source) => !configId || (source.config_id ?? '') === configId);
  async function search(event: Event) {
    event.preventDefault();
    if (!query.trim()) return;
    setResults({});
    await Promise.all(
      modes.map(async (mode) => {
        try {
          const sources = sourcesFor(indexed.data ?? [], configId, executionId);
          const answer = await api<{ results: Result[] }>(`/chat/search/${mode}`, {
            body: {
              query,
              limit: 10,
              ...(sources.length > 0 ? { sources: sources.slice(0, 100) } : {}),
              ...(language ? { language } : {}),
            },
          });
          setResults((previous) => ({ ...previous, [mode]: answer.results }));
        } catch (failure) {
          setResults((previous) => ({ ...previous, [mode]: (failure as Error).message }));
        }
      }),
    );
  }
  return html`<section>
    <h1>Search</h1>
    <form class="inline" onSubmit=${search} role="search">
      <label for="query" class="visually-hidden">Query</label>
      <input id="query" type="search" placeholder="Ask or type keywords" value=${query} onInput=${(event: Event) => setQuery((event.target as HTMLInputElement).value)} />
      <button type="submit">Search</button>
    </form>
    <form class="inline filters" aria-label="Search filters" onSubmit=${search}>
      <label for="search-config">Config</label>
      <select id="search-config" value=${configId} onChange=${(event: Event) => {
        setConfigId((event.target as HTMLSelectElement).value);
        setExecutionId('');
      }}>
        <option value="">Any config</option>
        ${summariseByConfig(indexed.data ?? []).map((summary) => html`<option value=${summary.config_id}>${summary.name}</option>`)}
      </select>
      <label for="search-language">Language</label>
      <select id="search-language" value=${language} onChange=${(event: Event) => setLanguage((event.target as HTMLSelectElement).value)}>
        <option value="">Any language</option>
        ${(languages.data ?? []).map((item) => html`<option value=${item.code}>${item.code} (${item.text_search_config})</option>`)}
      </select>
      <label for="search-source">Source</label>
      <select id="search-source" value=${executionId} onChange=${(event: Event) => setExecutionId((event.target as HTMLSelectElement).value)}>
        <option value="">Any run</option>
        ${runs.map(
          (source) =>
            html`<option value=${source.execution_id}>${source.config_name ?? 'deleted config'}${source.tag ? ` [${source.tag}]` : ''}, ${source.document_count} documents, ${when(source.indexed_at)}</option>`,
        )}
      </select>
    </form>
    <div class="columns">
      ${modes.map(
        (mode) => html`<div class="column" aria-label=${`${mode} results`}>
          <h2>${mode}</h2>
          ${typeof results[mode] === 'string' ? html`<${ErrorText} error=${results[mode]} />` : ''}
          <ol class="results">
            ${
              Array.isArray(results[mode])
                ? (results[mode] as Result[]).map((result) => html`<${ResultItem} result=${result} />`)
                : ''
            }
          </ol>
        </div>`,
      )}
    </div>
  </section>`;
}

export function ResultItem({ result }: { result: Result }) {
  const title = result.source.title ?? result.source.url ?? 'untitled';
  return html`<li>
    <${SourceLink} source=${result.source}>${title}<//>
    <div class="muted">${result.source.heading_path.join(' › ')}</div>
    <p class="snippet">${result.text.slice(0, 280)}${result.text.length > 280 ? '…' : ''}</p>
    <div class="muted">score ${result.score.toFixed(4)}${
      result.components?.length
        ? html` · ${result.components
            .map((component) =>
              component.rank === null
                ? `not in ${component.ranking}`
                : `${component.ranking} #${component.rank}`,
            )
            .join(', ')}`
        : ''
    }</div>
  </li>`;
}
