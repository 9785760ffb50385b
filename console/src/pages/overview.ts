/**
 * Overview: component health, running executions and the runs that need attention (failed,
 * partial or empty: docs/engine.md, "Outcomes"), refreshed every 2 s.
 */
import { api } from '../api.js';
import { ErrorText, html, RunState, Status, short, useLoad, when } from '../ui.js';

interface Health {
  status: string;
  components: Record<string, { status: string; kind?: string; latency_ms?: number }>;
}
export interface Execution {
  id: string;
  config_id: string;
  status: string;
  outcome: string | null;
  first_errors: Array<{ route_id: string; stage: string; status: string; error: string | null }>;
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
  // Failed, partly failed and empty runs: a completed status alone does not mean it worked.
  const failed = useLoad(
    () => api<{ executions: Execution[] }>('/executions?outcome=failed,partial,empty&limit=10'),
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
    <h2>Needs attention: recent failed, partial or empty runs</h2>
    <div aria-label="Needs attention">
      <${ExecutionTable} rows=${failed.data?.executions} empty="No failed, partial or empty runs." />
    </div>
    <h2>Latest executions ${recent.data ? html`<span class="muted">(${recent.data.total} in all)</span>` : ''}</h2>
    <${ExecutionTable} rows=${recent.data?.executions} empty="No executions yet." />
  </section>`;
}

/** The first failed or skipped message of a partial or empty run: why it needs attention. */
function firstError(row: Execution): string {
  const first = row.first_errors?.[0];
  return first ? `${first.route_id}/${first.stage}: ${first.error ?? first.status}` : '';
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
          <td><${RunState} status=${row.status} outcome=${row.outcome} /></td>
          <td>${when(row.created_at)}</td>
          <td>${when(row.finished_at)}</td>
          <td class="clip">${row.error ?? firstError(row)}</td>
        </tr>`,
      )}
    </tbody>
  </table></div>`;
}
