/** Webhooks: subscriptions (create, toggle, test, delete) and each one's deliveries (retry). */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorText, html, Status, useLoad, when } from '../ui.js';

interface Subscription {
  webhook_id: string;
  url: string;
  event_types: string[];
  enabled: boolean;
  secret_hint?: string;
  created_at: string;
}
interface Delivery {
  delivery_id: string;
  event_type: string;
  status: string;
  attempts: number;
  response_code: number | null;
  response_body_snippet: string | null;
  next_retry_at: string | null;
  timestamp: string;
  error: string | null;
}

const eventTypes = [
  'execution.started',
  'execution.completed',
  'execution.failed',
  'execution.cancelled',
  'lineage.failed',
  'storage.object_created',
];

export function Webhooks() {
  const list = useLoad(() => api<{ webhooks: Subscription[] }>('/webhooks'), []);
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [types, setTypes] = useState<string[]>(['execution.completed']);
  const [error, setError] = useState<string | undefined>(undefined);
  const [message, setMessage] = useState<string | undefined>(undefined);
  const [open, setOpen] = useState<string | undefined>(undefined);
  async function act(action: () => Promise<unknown>, done?: string) {
    setError(undefined);
    setMessage(undefined);
    try {
      await action();
      if (done) setMessage(done);
      list.reload();
    } catch (failure) {
      setError((failure as Error).message);
    }
  }
  const create = (event: Event) => {
    event.preventDefault();
    act(() => api('/webhooks', { body: { url, secret, event_types: types } }), 'Subscription created.');
  };
  return html`<section>
    <h1>Webhooks</h1>
    <${ErrorText} error=${list.error ?? error} />
    ${message ? html`<p class="ok" role="status">${message}</p>` : ''}
    <form class="stack" onSubmit=${create} aria-label="New subscription">
      <label for="hook-url">Target URL</label>
      <input id="hook-url" type="url" required value=${url} onInput=${(event: Event) => setUrl((event.target as HTMLInputElement).value)} />
      <label for="hook-secret">Signing secret (at least 16 characters)</label>
      <input id="hook-secret" required minlength="16" value=${secret} onInput=${(event: Event) => setSecret((event.target as HTMLInputElement).value)} />
      <fieldset><legend>Events</legend>
        ${eventTypes.map(
          (type) => html`<label class="check"><input type="checkbox" checked=${types.includes(type)}
            onChange=${(event: Event) => setTypes((event.target as HTMLInputElement).checked ? [...types, type] : types.filter((item) => item !== type))} /> ${type}</label>`,
        )}
      </fieldset>
      <button type="submit">Create subscription</button>
    </form>
    <div class="table-wrap"><table>
      <thead><tr><th>URL</th><th>Events</th><th>Enabled</th><th>Actions</th></tr></thead>
      <tbody>
        ${(list.data?.webhooks ?? []).map(
          (hook) => html`<tr>
            <td class="clip">${hook.url}</td>
            <td>${hook.event_types.join(', ')}</td>
            <td>${hook.enabled ? 'yes' : 'no'}</td>
            <td><div class="actions row-actions">
              <button type="button" onClick=${() => act(() => api(`/webhooks/${hook.webhook_id}/toggle`, { method: 'POST' }))}>${hook.enabled ? 'Disable' : 'Enable'}</button>
              <button type="button" onClick=${() => act(() => api(`/webhooks/${hook.webhook_id}/test`, { method: 'POST' }), 'Test event sent.')}>Test</button>
              <button type="button" onClick=${() => setOpen(open === hook.webhook_id ? undefined : hook.webhook_id)}>Deliveries</button>
              <button type="button" class="danger" onClick=${() => act(() => api(`/webhooks/${hook.webhook_id}`, { method: 'DELETE' }))}>Delete</button>
            </div></td>
          </tr>`,
        )}
      </tbody>
    </table></div>
    ${open ? html`<${Deliveries} webhookId=${open} />` : ''}
  </section>`;
}

function Deliveries({ webhookId }: { webhookId: string }) {
  const deliveries = useLoad(
    () => api<{ deliveries: Delivery[] }>(`/webhooks/${webhookId}/deliveries?limit=50`),
    [webhookId],
    3000,
  );
  const [error, setError] = useState<string | undefined>(undefined);
  async function retry(deliveryId: string) {
    try {
      await api(`/webhooks/${webhookId}/deliveries/${deliveryId}/retry`, { method: 'POST' });
      deliveries.reload();
    } catch (failure) {
      setError((failure as Error).message);
    }
  }
  return html`<section aria-label="Deliveries">
    <h2>Deliveries</h2>
    <${ErrorText} error=${deliveries.error ?? error} />
    ${deliveries.data?.deliveries.length === 0 ? html`<p class="muted">No deliveries yet.</p>` : ''}
    <div class="table-wrap"><table>
      <thead><tr><th>Event</th><th>Status</th><th>Attempts</th><th>Answer</th><th>Next retry</th><th></th></tr></thead>
      <tbody>
        ${(deliveries.data?.deliveries ?? []).map(
          (delivery) => html`<tr>
            <td>${delivery.event_type}<div class="muted">${when(delivery.timestamp)}</div></td>
            <td><${Status} status=${delivery.status} /></td>
            <td>${delivery.attempts}</td>
            <td class="clip">${delivery.response_code ?? ''} ${delivery.response_body_snippet ?? delivery.error ?? ''}</td>
            <td>${when(delivery.next_retry_at)}</td>
            <td><button type="button" onClick=${() => retry(delivery.delivery_id)}>Retry</button></td>
          </tr>`,
        )}
      </tbody>
    </table></div>
  </section>`;
}
