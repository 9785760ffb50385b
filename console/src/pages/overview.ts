/** Overview: component health, running executions and recent failures, refreshed every 2 s. */
import { api } from '../api.js';
import { ErrorText, html, Status, short, useLoad, when } from '../ui.js';

interface Health {
  status: string;
  components: Record<string, { status: string; kind?: string; latency_ms?: number }>;
}
export interface Execution {
  id: string;
  config_id: string;
  status: string;
  tag: string | null;
  error: string | null;
  created_at: string;
  finished_at: string | null;
}

export function Overview() {
  const health = useLoad(() => api<Health>('/system/health'), [], 2000);
  const running = useLoad(
    () => api<{ executions: Execution[] }>('/executions?status=running&limit=20'),
    [],
    2000,
  );
  const failed = useLoad(
    () => api<{ executions: Execution[] }>('/executions?status=failed&limit=10'),
    [],
    5000,
  );
  const recent = useLoad(
    () => api<{ executions: Execution[]; total: number }>('/executions?limit=10'),
    [],
    5000,
  );
  return html`<section>
    <h1>Overview</h1>
    <${ErrorText} error=${health.error} />
    <div class="cards" aria-label="Component health">
      ${Object.entries(health.data?.components ?? {}).map(
        ([name, component]) => html`<div class="card">
          <h2>${name}</h2>
          <${Status} status=${component.status} />
          <p class="muted">${component.kind ?? ''} ${component.latency_ms !== undefined ? `${component.latency_ms} ms` : ''}</p>
        </div>`,
      )}
    </div>
    <h2>Running executions</h2>
    <${ExecutionTable} rows=${running.data?.executions} empty="Nothing is running." />
    <h2>Recent failures</h2>
    <${ExecutionTable} rows=${failed.data?.executions} empty="No failed executions." />
    <h2>Latest executions ${recent.data ? html`<span class="muted">(${recent.data.total} in all)</span>` : ''}</h2>
    <${ExecutionTable} rows=${recent.data?.executions} empty="No executions yet." />
  </section>`;
}

export function ExecutionTable({ rows, empty }: { rows: Execution[] | undefined; empty: string }) {
  if (!rows) return html`<p class="muted">Loading…</p>`;
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<div class="table-wrap"><table>
    <thead><tr><th>Execution</th><th>Status</th><th>Started</th><th>Finished</th><th>Error</th></tr></thead>
    <tbody>
      ${rows.map(
        (row) => html`<tr>
          <td><a href=${`#/executions/${row.id}`}>${short(row.id)}</a>${row.tag ? html` <span class="tag">${row.tag}</span>` : ''}</td>
          <td><${Status} status=${row.status} /></td>
          <td>${when(row.created_at)}</td>
          <td>${when(row.finished_at)}</td>
          <td class="clip">${row.error ?? ''}</td>
        </tr>`,
      )}
    </tbody>
  </table></div>`;
}
