/** Search: keyword, vector and RRF side by side for one query, with RRF's component breakdown. */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorText, html, SourceLink } from '../ui.js';

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

export function Search() {
  const [query, setQuery] = useState('');
  const [results, setResults] = useState<Partial<Record<Mode, Result[] | string>>>({});
  async function search(event: Event) {
    event.preventDefault();
    if (!query.trim()) return;
    setResults({});
    await Promise.all(
      modes.map(async (mode) => {
        try {
          const answer = await api<{ results: Result[] }>(`/chat/search/${mode}`, {
            body: { query, limit: 10 },
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
