/**
 * Chat templates, edited beside the chat: pick one, edit its fields as JSON (name, persona,
 * system_prompt, rag, llm, ...; the service checks them), save, create or delete.
 */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorText, html } from '../ui.js';

export interface Template {
  id: string;
  name: string;
  [field: string]: unknown;
}

const editable = (template: Template | undefined) => {
  if (!template)
    return JSON.stringify({ name: 'New template', system_prompt: '', rag: { limit: 5 } }, null, 2);
  const { id: _id, created_at: _created, updated_at: _updated, ...fields } = template;
  return JSON.stringify(fields, null, 2);
};

export function TemplateEditor({
  templates,
  selected,
  onChanged,
}: {
  templates: Template[];
  selected: string;
  onChanged: (id: string) => void;
}) {
  const current = templates.find((template) => template.id === selected);
  const [text, setText] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [message, setMessage] = useState<string | undefined>(undefined);
  const value = text ?? editable(current);
  async function act(action: () => Promise<string>, done: string) {
    setError(undefined);
    setMessage(undefined);
    try {
      const id = await action();
      setText(undefined);
      setMessage(done);
      onChanged(id);
    } catch (failure) {
      setError((failure as Error).message);
    }
  }
  const parsed = () => JSON.parse(value) as Record<string, unknown>;
  return html`<details class="templates">
    <summary>${current ? `Template: ${current.name}` : 'Templates'}</summary>
    <${ErrorText} error=${error} />
    ${message ? html`<p class="ok" role="status">${message}</p>` : ''}
    <label for="template-json">${current ? 'Fields of the selected template' : 'A new template'} (JSON)</label>
    <textarea id="template-json" class="editor short" spellcheck="false" value=${value}
      onInput=${(event: Event) => setText((event.target as HTMLTextAreaElement).value)}></textarea>
    <div class="actions">
      ${
        current
          ? html`<button type="button" onClick=${() => act(async () => (await api<Template>(`/chat/templates/${current.id}`, { method: 'PUT', body: parsed() })).id, 'Template saved.')}>Save template</button>
            <button type="button" class="danger" onClick=${() =>
              act(async () => {
                await api(`/chat/templates/${current.id}`, { method: 'DELETE' });
                return '';
              }, 'Template deleted.')}>Delete template</button>`
          : html`<button type="button" onClick=${() => act(async () => (await api<Template>('/chat/templates', { body: parsed() })).id, 'Template created.')}>Create template</button>`
      }
    </div>
  </details>`;
}
