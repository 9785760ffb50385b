/**
 * Pipelines: the routes of running executions with pause, resume and stop, and per stage the
 * messages received, completed, failed and in flight with p50/p95 durations, read again when the
 * executions event stream says an execution changed (at most every 2 s).
 */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorText, html, Status, useExecutionEvents, useLoad } from '../ui.js';

interface Summary {
  route_id: string;
  status: string;
  paused: boolean;
  executions: number;
  stages: string[];
}
interface Counts {
  messages_received: number;
  messages_completed: number;
  messages_failed: number;
  messages_in_flight: number;
}
interface Metrics extends Counts {
  route_id: string;
  messages_per_second: number;
  stages: (Counts & { stage: string; duration_ms_p50: number | null; duration_ms_p95: number | null })[];
}

export function Pipelines() {
  const list = useLoad(() => api<{ pipelines: Summary[] }>('/pipelines'), []);
  useExecutionEvents(() => list.reload(), 2000);
  const [error, setError] = useState<string | undefined>(undefined);
  async function control(routeId: string, action: 'pause' | 'resume' | 'stop') {
    setError(undefined);
    try {
      if (action === 'stop') await api(`/pipelines/${encodeURIComponent(routeId)}`, { method: 'DELETE' });
      else await api(`/pipelines/${encodeURIComponent(routeId)}`, { method: 'PATCH', body: { action } });
      list.reload();
    } catch (failure) {
      setError((failure as Error).message);
    }
  }
  const pipelines = list.data?.pipelines;
  return html`<section>
    <h1>Pipelines</h1>
    <${ErrorText} error=${list.error ?? error} />
    ${pipelines && pipelines.length === 0 ? html`<p class="muted">No route is running: pipelines appear while an execution runs.</p>` : ''}
    ${(pipelines ?? []).map(
      (pipeline) => html`<article class="pipeline" aria-label=${`Route ${pipeline.route_id}`}>
        <h2>${pipeline.route_id} <${Status} status=${pipeline.paused ? 'paused' : pipeline.status} /></h2>
        <p class="muted">${pipeline.executions} active execution${pipeline.executions === 1 ? '' : 's'} · stages ${pipeline.stages.join(' → ')}</p>
        <div class="actions">
          ${
            pipeline.paused
              ? html`<button type="button" onClick=${() => control(pipeline.route_id, 'resume')}>Resume</button>`
              : html`<button type="button" onClick=${() => control(pipeline.route_id, 'pause')}>Pause</button>`
          }
          <button type="button" class="danger" onClick=${() => control(pipeline.route_id, 'stop')}>Stop</button>
        </div>
        <${RouteMetrics} routeId=${pipeline.route_id} />
      </article>`,
    )}
  </section>`;
}

function RouteMetrics({ routeId }: { routeId: string }) {
  const metrics = useLoad(() => api<Metrics>(`/pipelines/${encodeURIComponent(routeId)}/metrics`), [routeId]);
  useExecutionEvents(() => metrics.reload(), 2000);
  const data = metrics.data;
  if (!data) return html`<${ErrorText} error=${metrics.error} />`;
  return html`<div class="table-wrap"><table>
    <caption class="muted">${data.messages_per_second.toFixed(1)} messages/s over the last minute</caption>
    <thead><tr><th>Stage</th><th>Received</th><th>Completed</th><th>Failed</th><th>In flight</th><th>p50 ms</th><th>p95 ms</th></tr></thead>
    <tbody>
      ${data.stages.map(
        (stage) => html`<tr>
          <td>${stage.stage}</td><td>${stage.messages_received}</td><td>${stage.messages_completed}</td>
          <td>${stage.messages_failed}</td><td>${stage.messages_in_flight}</td>
          <td>${stage.duration_ms_p50 ?? '—'}</td><td>${stage.duration_ms_p95 ?? '—'}</td>
        </tr>`,
      )}
    </tbody>
  </table></div>`;
}
