/**
 * Overview: component health, running executions, the runs that need attention (failed,
 * partial or empty: docs/engine.md, "Outcomes") and the latest ones, each named by its
 * config, tag, duration, messages and outcome. The execution lists follow the executions
 * event stream (GET /executions/events) instead of polling; health is read every 10 s.
 */
import { api } from '../api.js';
import {
  countsText,
  type Execution,
  ExecutionName,
  firstError,
  runDuration,
  Started,
} from '../executions.js';
import { ErrorText, html, RunState, Status, useExecutionEvents, useLoad } from '../ui.js';

export type { Execution } from '../executions.js';

interface Health {
  status: string;
  components: Record<string, { status: string; kind?: string; latency_ms?: number }>;
}

export function Overview() {
  const health = useLoad(() => api<Health>('/system/health'), [], 10_000);
  const running = useLoad(() => api<{ executions: Execution[] }>('/executions?status=running&limit=20'), []);
  // Failed, partly failed and empty runs: a completed status alone does not mean it worked.
  const attention = useLoad(
    () => api<{ executions: Execution[] }>('/executions?outcome=failed,partial,empty&limit=10'),
    [],
  );
  const recent = useLoad(() => api<{ executions: Execution[]; total: number }>('/executions?limit=10'), []);
  useExecutionEvents(() => {
    running.reload();
    attention.reload();
    recent.reload();
  }, 1000);
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
      <${ExecutionTable} rows=${attention.data?.executions} empty="No failed, partial or empty runs." />
    </div>
    <h2>Latest executions ${recent.data ? html`<span class="muted">(${recent.data.total} in all)</span>` : ''}</h2>
    <div aria-label="Latest executions">
      <${ExecutionTable} rows=${recent.data?.executions} empty="No executions yet." />
    </div>
  </section>`;
}

export function ExecutionTable({ rows, empty }: { rows: Execution[] | undefined; empty: string }) {
  if (!rows) return html`<p class="muted">Loading…</p>`;
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<div class="table-wrap"><table class="executions">
    <thead><tr><th>Execution</th><th>Outcome</th><th>Messages</th><th>Started</th><th>Duration</th><th>Why</th></tr></thead>
    <tbody>
      ${rows.map(
        (row) => html`<tr>
          <td><${ExecutionName} execution=${row} /></td>
          <td><${RunState} status=${row.status} outcome=${row.outcome} /></td>
          <td>${countsText(row.message_counts)}</td>
          <td><${Started} execution=${row} /></td>
          <td>${runDuration(row)}</td>
          <td class="clip" title=${row.error ?? firstError(row)}>${row.outcome === 'succeeded' ? '' : (row.error ?? firstError(row))}</td>
        </tr>`,
      )}
    </tbody>
  </table></div>`;
}
