/**
 * The Weir console: a hash-routed Preact app (htm templates, no build-time JSX) over the public
 * API only. Routes: #/ overview, #/configs[/id|/new], #/pipelines, #/executions/id,
 * #/storage/path?object=key, #/documents,
 * #/search, #/chat, #/webhooks.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { apiKey, watchMissingKey } from './api.js';
import { Chat } from './pages/chat.js';
import { ConfigEditor, Configs } from './pages/configs.js';
import { Docs } from './pages/docs.js';
import { Documents } from './pages/documents.js';
import { ExecutionPage } from './pages/execution.js';
import { Overview } from './pages/overview.js';
import { Pipelines } from './pages/pipelines.js';
import { Search } from './pages/search.js';
import { Storage } from './pages/storage.js';
import { Webhooks } from './pages/webhooks.js';
import { html } from './ui.js';

const sections = [
  ['#/', 'Overview'],
  ['#/configs', 'Configs'],
  ['#/pipelines', 'Pipelines'],
  ['#/storage/', 'Storage'],
  ['#/documents', 'Documents'],
  ['#/search', 'Search'],
  ['#/chat', 'Chat'],
  ['#/webhooks', 'Webhooks'],
] as const;

function useHash(): string {
  const [hash, setHash] = useState(location.hash || '#/');
  useEffect(() => {
    const changed = () => setHash(location.hash || '#/');
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return hash;
}

function page(hash: string) {
  const [route = '', query = ''] = hash.slice(1).split('?');
  const parts = route.split('/').filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query);
  switch (parts[0]) {
    case undefined:
      return html`<${Overview} />`;
    case 'configs':
      return parts[1]
        ? html`<${ConfigEditor} id=${parts[1]} key=${parts[1]} created=${params.has('created')} />`
        : html`<${Configs} />`;
    case 'executions':
      return html`<${ExecutionPage} id=${parts[1] ?? ''} key=${parts[1]} />`;
    case 'storage':
      return html`<${Storage} path=${parts.slice(1).join('/')} objectKey=${params.get('object') ?? undefined} />`;
    case 'docs':
      return html`<${Docs} name=${parts[1] ?? 'console'} code=${params.get('code') ?? undefined} key=${hash} />`;
    case 'documents':
      return html`<${Documents} />`;
    case 'pipelines':
      return html`<${Pipelines} />`;
    case 'search':
      return html`<${Search} />`;
    case 'chat':
      return html`<${Chat} />`;
    case 'webhooks':
      return html`<${Webhooks} />`;
    default:
      return html`<p>No such page. <a href="#/">Overview</a></p>`;
  }
}

function KeyPrompt({ onDone }: { onDone: () => void }) {
  const [value, setValue] = useState('');
  return html`<form class="dialog key" role="dialog" aria-label="API key" onSubmit=${(event: Event) => {
    event.preventDefault();
    apiKey.set(value.trim());
    onDone();
  }}>
    <h2>API key</h2>
    <p>This service needs an API key (one of <code>WEIR_API_KEYS</code>). It is kept for this browser session only.</p>
    <label for="api-key">Key</label>
    <input id="api-key" type="password" autocomplete="off" required value=${value}
      onInput=${(event: Event) => setValue((event.target as HTMLInputElement).value)} />
    <button type="submit">Use this key</button>
  </form>`;
}

function App() {
  const hash = useHash();
  const [needKey, setNeedKey] = useState(false);
  const [generation, setGeneration] = useState(0);
  useEffect(() => watchMissingKey(setNeedKey), []);
  const current =
    sections.find(([href]) => href !== '#/' && hash.startsWith(href.replace(/\/$/, '')))?.[0] ??
    (hash === '#/' ? '#/' : '');
  return html`<div class="layout">
    <header class="top">
      <a class="brand" href="#/">Weir</a>
      <nav aria-label="Sections">
        ${sections.map(([href, label]) => html`<a href=${href} aria-current=${current === href ? 'page' : undefined}>${label}</a>`)}
      </nav>
      <a class="muted api-docs" href="/docs">API docs</a>
    </header>
    <main key=${generation}>${
      needKey
        ? html`<${KeyPrompt} onDone=${() => {
            setNeedKey(false);
            setGeneration((value) => value + 1);
          }} />`
        : page(hash)
    }</main>
  </div>`;
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(html`<${App} />`, root);
}
