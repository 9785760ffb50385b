/**
 * Chat: answers streamed from /chat/stream and rendered as sanitised markdown (markdown.ts),
 * citations linked to their passages and sources,
 * a template to pick (and edit under Templates), and the conversation kept for the session.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, postEvents } from '../api.js';
import { markdownHtml } from '../markdown.js';
import { ErrorText, html, SourceLink, useLoad } from '../ui.js';
import { type Template, TemplateEditor } from './templates.js';

interface Source {
  citation: number;
  cited: boolean;
  text: string;
  source: {
    url: string | null;
    object_key: string | null;
    link: string | null;
    title: string | null;
    heading_path: string[];
  };
}
interface Turn {
  question: string;
  answer: string;
  sources: Source[];
  error?: string;
  done: boolean;
}

const HISTORY = 'weir-chat-history';

export function Chat() {
  const [turns, setTurns] = useState<Turn[]>(() => JSON.parse(sessionStorage.getItem(HISTORY) ?? '[]'));
  const [question, setQuestion] = useState('');
  const [template, setTemplate] = useState('');
  const templates = useLoad(() => api<{ templates: Template[] }>('/chat/templates'), []);
  useEffect(
    () => sessionStorage.setItem(HISTORY, JSON.stringify(turns.filter((turn) => turn.done))),
    [turns],
  );

  async function ask(event: Event) {
    event.preventDefault();
    const query = question.trim();
    if (!query) return;
    setQuestion('');
    const index = turns.length;
    const update = (change: (turn: Turn) => Turn) =>
      setTurns((previous) => previous.map((turn, position) => (position === index ? change(turn) : turn)));
    setTurns((previous) => [...previous, { question: query, answer: '', sources: [], done: false }]);
    try {
      await postEvents(
        '/chat/stream',
        { query, ...(template ? { template_id: template } : {}) },
        (name, data) => {
          const body = data as Record<string, unknown>;
          if (name === 'sources') update((turn) => ({ ...turn, sources: body.sources as Source[] }));
          else if (name === 'text')
            update((turn) => ({
              ...turn,
              // The chunks carry their own line breaks (the extractive provider's lines start
              // with one); a model's tokens are glued as they come.
              answer: `${turn.answer}${String(body.content ?? '')}`,
            }));
          else if (name === 'error')
            update((turn) => ({ ...turn, error: String(body.detail ?? body.message ?? 'error') }));
          else if (name === 'done') update((turn) => ({ ...turn, done: true }));
        },
      );
    } catch (failure) {
      update((turn) => ({ ...turn, error: (failure as Error).message, done: true }));
    }
  }
  return html`<section>
    <h1>Chat</h1>
    <div class="conversation" aria-live="polite">
      ${turns.map(
        (turn) => html`<article class="turn">
          <p class="question">${turn.question}</p>
          ${
            turn.answer
              ? html`<div class="answer markdown" dangerouslySetInnerHTML=${{ __html: markdownHtml(turn.answer) }}></div>`
              : html`<div class="answer">${turn.done ? '' : '…'}</div>`
          }
          <${ErrorText} error=${turn.error} />
          ${
            turn.sources.length > 0
              ? html`<ol class="citations" aria-label="Citations">
                ${turn.sources.map(
                  (source) => html`<li id=${`c${source.citation}`} class=${source.cited ? 'cited' : ''}>
                    <${SourceLink} source=${source.source}>[${source.citation}] ${source.source.title ?? source.source.url}<//>
                    <span class="muted">${source.source.heading_path.join(' › ')}</span>
                    <details><summary>Passage</summary><p>${source.text}</p></details>
                  </li>`,
                )}
              </ol>`
              : ''
          }
        </article>`,
      )}
    </div>
    <form class="inline" onSubmit=${ask}>
      <label for="question" class="visually-hidden">Question</label>
      <input id="question" placeholder="Ask about what was indexed" value=${question} onInput=${(event: Event) => setQuestion((event.target as HTMLInputElement).value)} />
      <label for="template" class="visually-hidden">Template</label>
      <select id="template" value=${template} onChange=${(event: Event) => setTemplate((event.target as HTMLSelectElement).value)}>
        <option value="">Default template</option>
        ${(templates.data?.templates ?? []).map((item) => html`<option value=${item.id}>${item.name}</option>`)}
      </select>
      <button type="submit">Ask</button>
      <button type="button" onClick=${() => setTurns([])}>Clear</button>
    </form>
    <${TemplateEditor}
      key=${template}
      templates=${templates.data?.templates ?? []}
      selected=${template}
      onChanged=${(id: string) => {
        setTemplate(id);
        templates.reload();
      }} />
  </section>`;
}
