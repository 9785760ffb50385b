/**
 * One execution: live statistics (a one-second long poll of /wait while it runs), progress per
 * stage (GET /executions/{id}/stages, every second while it runs), the failed
 * and skipped messages with their errors, the upstream lineage of any message drawn as a
 * tree, and cancel.
 */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorText, html, RunState, Status, short, useLoad, when } from '../ui.js';
import type { Execution } from './overview.js';

interface Statistics {
  total_messages: number;
  completed_messages: number;
  failed_messages: number;
  skipped_messages: number;
  processing_messages: number;
  success_rate: number;
}
interface StageCounts {
  route_id: string;
  stage: string;
  queued: number;
  completed: number;
  failed: number;
  skipped: number;
}
interface Message {
  message_id: string;
  correlation_id: string | null;
  route_id: string;
  stage: string;
  emitted_by: string;
  status: string;
  attempts: number;
  error: string | null;
  duration_ms: number | null;
}

/** What a partial or empty run's outcome means, with its first reason (docs/engine.md). */
function outcomeNote(execution: Execution) {
  if (execution.outcome !== 'partial' && execution.outcome !== 'empty') return '';
  const first = execution.first_errors?.[0];
  const meaning =
    execution.outcome === 'empty'
      ? 'Nothing reached the end of the pipeline.'
      : 'Some messages failed or were skipped; the rest reached the end of the pipeline.';
  return html`<p class="outcome-note" role="status">
    ${meaning}${first ? html` First: <strong>${first.route_id} / ${first.stage}</strong>: ${first.error ?? first.status}` : ''}
  </p>`;
}

export function ExecutionPage({ id }: { id: string }) {
  const execution = useLoad(() => api<Execution>(`/executions/${id}`), [id], 1500);
  const running = execution.data?.status === 'running';
  const statistics = useLoad(
    (signal) =>
      api<{ statistics: Statistics }>(`/executions/${id}/wait`, {
        body: { timeout_seconds: 1 },
        signal,
      }).then((answer) => answer.statistics),
    [id],
    running ? 250 : 5000,
  );
  const stages = useLoad(
    () => api<{ stages: StageCounts[] }>(`/executions/${id}/stages`).then((answer) => answer.stages),
    [id, execution.data?.status],
    running ? 1000 : undefined,
  );
  const problems = useLoad(async () => {
    const [failed, skipped] = await Promise.all([
      api<{ messages: Message[] }>(`/executions/${id}/lineage?status=failed&limit=100`),
      api<{ messages: Message[] }>(`/executions/${id}/lineage?status=skipped&limit=100`),
    ]);
    return [...failed.messages, ...skipped.messages];
  }, [id, execution.data?.status]);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const stats = statistics.data;
  const done = stats ? stats.completed_messages + stats.failed_messages + stats.skipped_messages : 0;
  async function cancel() {
    try {
      await api(`/executions/${id}/cancel`, { method: 'POST' });
      execution.reload();
    } catch (failure) {
      setError((failure as Error).message);
    }
  }
  return html`<section>
    <h1>Execution <code>${short(id)}</code></h1>
    <${ErrorText} error=${execution.error ?? error} />
    ${
      execution.data
        ? html`<p>
          <${RunState} status=${execution.data.status} outcome=${execution.data.outcome} /> started ${when(execution.data.created_at)}
          ${execution.data.finished_at ? `, ended ${when(execution.data.finished_at)}` : ''}
          · config <a href=${`#/configs/${execution.data.config_id}`}>${short(execution.data.config_id)}</a>
          · <a href=${`#/storage/${id}`}>stored objects</a>
          ${running ? html` <button type="button" class="danger" onClick=${cancel}>Cancel</button>` : ''}
        </p>
        ${execution.data.error ? html`<pre class="error-text">${execution.data.error}</pre>` : ''}
        ${outcomeNote(execution.data)}`
        : ''
    }
    ${
      stats
        ? html`<div class="progress" aria-label="Progress">
          <progress max=${Math.max(stats.total_messages, 1)} value=${done}></progress>
          <span>${done} of ${stats.total_messages} messages</span>
        </div>
        <dl class="stats">
          <div><dt>Completed</dt><dd>${stats.completed_messages}</dd></div>
          <div><dt>Failed</dt><dd>${stats.failed_messages}</dd></div>
          <div><dt>Skipped</dt><dd>${stats.skipped_messages}</dd></div>
          <div><dt>Processing</dt><dd>${stats.processing_messages}</dd></div>
          <div><dt>Success rate</dt><dd>${Math.round(stats.success_rate * 1000) / 10}%</dd></div>
        </dl>`
        : html`<p class="muted">Loading statistics…</p>`
    }
    <h2>Stages</h2>
    <${StageTable} stages=${stages.data} />
    <h2>Failed and skipped messages</h2>
    ${problems.data && problems.data.length === 0 ? html`<p class="muted">None.</p>` : ''}
    <ul class="messages">
      ${(problems.data ?? []).map(
        (message) => html`<li>
          <${Status} status=${message.status} /> <strong>${message.route_id} / ${message.stage}</strong>
          <span class="muted">after ${message.attempts} attempt${message.attempts === 1 ? '' : 's'}</span>
          <pre class="error-text">${message.error}</pre>
          <button type="button" onClick=${() => setSelected(message.message_id)}>Lineage</button>
        </li>`,
      )}
    </ul>
    ${selected ? html`<${Lineage} executionId=${id} messageId=${selected} />` : ''}
  </section>`;
}

/** Per stage: a bar of the messages done, and the counts by status. */
function StageTable({ stages }: { stages: StageCounts[] | undefined }) {
  if (!stages) return html`<p class="muted">Loading…</p>`;
  return html`<div class="table-wrap"><table aria-label="Stages">
    <thead><tr><th>Route / stage</th><th>Progress</th><th>Queued</th><th>Completed</th><th>Failed</th><th>Skipped</th></tr></thead>
    <tbody>
      ${stages.map((stage) => {
        const done = stage.completed + stage.failed + stage.skipped;
        const total = done + stage.queued;
        return html`<tr>
          <td>${stage.route_id} / ${stage.stage}</td>
          <td><progress max=${Math.max(total, 1)} value=${done} aria-label=${`${stage.stage}: ${done} of ${total}`}></progress></td>
          <td>${stage.queued}</td><td>${stage.completed}</td><td>${stage.failed}</td><td>${stage.skipped}</td>
        </tr>`;
      })}
    </tbody>
  </table></div>`;
}

/** The message and its ancestors, init message first, each a level deeper. */
function Lineage({ executionId, messageId }: { executionId: string; messageId: string }) {
  const chain = useLoad(
    () => api<{ chain: Message[] }>(`/executions/${executionId}/lineage/${messageId}/upstream`),
    [executionId, messageId],
  );
  const messages = [...(chain.data?.chain ?? [])].reverse();
  return html`<section aria-label="Lineage">
    <h2>Lineage of <code>${short(messageId)}</code></h2>
    <${ErrorText} error=${chain.error} />
    <ol class="tree">
      ${messages.map(
        (message, depth) => html`<li style=${{ marginLeft: `${depth * 1.25}rem` }}>
          <${Status} status=${message.status} /> ${message.route_id} / ${message.stage}
          <span class="muted">from ${message.emitted_by}${message.duration_ms !== null ? `, ${message.duration_ms} ms` : ''}</span>
          ${message.error ? html`<div class="error-text">${message.error}</div>` : ''}
        </li>`,
      )}
    </ol>
  </section>`;
}
