/**
 * Storage: browse folders, preview an object (markdown rendered, HTML sanitised in a sandboxed
 * frame, JSON pretty-printed, vectors summarised), its sidecar metadata, and download.
 */
import DOMPurify from 'dompurify';
import { api, download, objectText } from '../api.js';
import { markdownHtml } from '../markdown.js';
import { ErrorText, html, useLoad, when } from '../ui.js';

interface Listing {
  path: string;
  parent: string | null;
  directories: { name: string; path: string }[];
  files: { name: string; key: string; size: number; content_type: string | null; created_at: string }[];
}
interface ObjectInfo {
  key: string;
  size: number;
  content_type: string | null;
  sha256: string;
  created_at: string;
  metadata: Record<string, unknown>;
}

const keyPath = (key: string) => key.split('/').map(encodeURIComponent).join('/');

export function Storage({ path, objectKey }: { path: string; objectKey: string | undefined }) {
  const listing = useLoad(() => api<Listing>(`/storage/browse?path=${encodeURIComponent(path)}`), [path]);
  return html`<section>
    <h1>Storage</h1>
    <nav class="crumbs" aria-label="Folder">
      <a href="#/storage/">root</a>
      ${path
        .split('/')
        .filter(Boolean)
        .map(
          (part, index, parts) =>
            html` / <a href=${`#/storage/${parts.slice(0, index + 1).join('/')}`}>${part}</a>`,
        )}
    </nav>
    <${ErrorText} error=${listing.error} />
    <div class="split">
      <ul class="listing">
        ${
          listing.data?.parent !== null && listing.data?.parent !== undefined
            ? html`<li><a href=${`#/storage/${listing.data.parent}`}>..</a></li>`
            : ''
        }
        ${(listing.data?.directories ?? []).map((directory) => html`<li class="folder"><a href=${`#/storage/${directory.path}`}>${directory.name}/</a></li>`)}
        ${(listing.data?.files ?? []).map(
          (file) => html`<li class=${file.key === objectKey ? 'selected' : ''}>
            <a href=${`#/storage/${path}?object=${encodeURIComponent(file.key)}`}>${file.name}</a>
            <span class="muted">${file.size} B · ${file.content_type ?? ''}</span>
          </li>`,
        )}
      </ul>
      ${objectKey ? html`<${Preview} objectKey=${objectKey} />` : html`<p class="muted">Pick an object to preview it.</p>`}
    </div>
  </section>`;
}

function Preview({ objectKey }: { objectKey: string }) {
  const info = useLoad(() => api<ObjectInfo>(`/storage/objects/${keyPath(objectKey)}/metadata`), [objectKey]);
  const type = info.data?.content_type ?? '';
  const textual =
    /^(text\/|application\/(json|xhtml\+xml|xml))/.test(type) || /\.(md|json|html?)$/.test(objectKey);
  const body = useLoad(
    () => (info.data && textual ? objectText(objectKey) : Promise.resolve(undefined)),
    [objectKey, info.data?.sha256],
  );
  return html`<article class="preview" aria-label="Object preview">
    <h2>${objectKey.split('/').pop()}</h2>
    <${ErrorText} error=${info.error ?? body.error} />
    ${
      info.data
        ? html`<p class="muted">${info.data.size} bytes · ${type} · ${when(info.data.created_at)}
          <button type="button" onClick=${() => download(objectKey)}>Download</button></p>
        <details open><summary>Sidecar metadata</summary><pre>${JSON.stringify(info.data.metadata, null, 2)}</pre></details>
        ${renderBody(objectKey, type, body.data, info.data.size)}`
        : ''
    }
  </article>`;
}

function renderBody(key: string, type: string, text: string | undefined, size: number) {
  if (/\.f32$/.test(key)) return html`<p>A vector of ${size / 4} float32 dimensions.</p>`;
  if (text === undefined)
    return html`<p class="muted">No preview for ${type || 'this object'}; download it.</p>`;
  if (/markdown/.test(type) || key.endsWith('.md'))
    return html`<div class="markdown" dangerouslySetInnerHTML=${{ __html: markdownHtml(text) }}></div>`;
  if (/json/.test(type)) {
    try {
      return html`<pre>${JSON.stringify(JSON.parse(text), null, 2)}</pre>`;
    } catch {
      return html`<pre>${text}</pre>`;
    }
  }
  if (/html/.test(type))
    return html`<iframe class="html-preview" title="Sanitised HTML" sandbox="" srcdoc=${DOMPurify.sanitize(text, { WHOLE_DOCUMENT: true })}></iframe>`;
  return html`<pre>${text}</pre>`;
}
