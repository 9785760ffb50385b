/**
 * One execution, named (config, version, tag, duration; the UUID to copy): its message counts
 * and state as the executions event stream (GET /executions/events) reports them, progress per
 * stage (GET /executions/{id}/stages, read again when the stream says the execution changed),
 * the failed and skipped messages with their errors, the upstream lineage of any message
 * drawn as a tree, and cancel.
 */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { type Execution, ExecutionName, runDuration } from '../executions.js';
import {
  ErrorText,
  html,
  plural,
  RunState,
  Status,
  short,
  useExecutionEvents,
  useLoad,
  when,
} from '../ui.js';

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
  const loaded = useLoad(() => api<Execution>(`/executions/${id}`), [id]);
  // The latest record the event stream sent, newer than the one loaded.
  const [live, setLive] = useState<Execution | undefined>(undefined);
  const execution = live ?? loaded.data;
  const running = execution?.status === 'running';
  const stages = useLoad(
    () => api<{ stages: StageCounts[] }>(`/executions/${id}/stages`).then((answer) => answer.stages),
    [id],
  );
  const problems = useLoad(async () => {
    const [failed, skipped] = await Promise.all([
      api<{ messages: Message[] }>(`/executions/${id}/lineage?status=failed&limit=100`),
      api<{ messages: Message[] }>(`/executions/${id}/lineage?status=skipped&limit=100`),
    ]);
    return [...failed.messages, ...skipped.messages];
  }, [id, execution?.status, execution?.message_counts.failed, execution?.message_counts.skipped]);
  useExecutionEvents((changed) => {
    const mine = changed?.find((record) => record.id === id) as Execution | undefined;
    if (changed && !mine) return;
    if (mine) setLive(mine);
    else loaded.reload();
    stages.reload();
  }, 1000);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const counts = execution?.message_counts;
  const done = counts ? counts.completed + counts.failed + counts.skipped : 0;
  async function cancel() {
    try {
      setLive(await api<Execution>(`/executions/${id}/cancel`, { method: 'POST' }));
    } catch (failure) {
      setError((failure as Error).message);
    }
  }
  return html`<section>
    <h1>Execution ${execution ? html`<${ExecutionName} execution=${execution} link=${false} />` : html`<code>${short(id)}</code>`}</h1>
    <${ErrorText} error=${loaded.error ?? error} />
    ${
      execution
        ? html`<p>
          <${RunState} status=${execution.status} outcome=${execution.outcome} /> started ${when(execution.created_at)}${
            execution.finished_at ? `, ended ${when(execution.finished_at)}` : ''
          }${running ? ', running for ' : ', ran for '}${runDuration(execution)}
          · config <a href=${`#/configs/${execution.config_id}`}>${execution.config_name ?? short(execution.config_id)}</a>
          · <a href=${`#/storage/${id}`}>stored objects</a>
          ${running ? html` <button type="button" class="danger" onClick=${cancel}>Cancel</button>` : ''}
        </p>
        ${execution.error ? html`<pre class="error-text">${execution.error}</pre>` : ''}
        ${outcomeNote(execution)}`
        : ''
    }
    ${
      counts
        ? html`<div class="progress" aria-label="Progress">
          <progress max=${Math.max(counts.total, 1)} value=${done}></progress>
          <span>${done} of ${plural(counts.total, 'message')}</span>
        </div>
        <dl class="stats">
          <div><dt>Completed</dt><dd>${counts.completed}</dd></div>
          <div><dt>Failed</dt><dd>${counts.failed}</dd></div>
          <div><dt>Skipped</dt><dd>${counts.skipped}</dd></div>
          <div><dt>Queued</dt><dd>${counts.queued}</dd></div>
          <div><dt>Success rate</dt><dd>${done === 0 ? '—' : `${Math.round(((counts.completed + counts.skipped) / done) * 1000) / 10}%`}</dd></div>
        </dl>`
        : html`<p class="muted">Loading…</p>`
    }
    <h2>Stages</h2>
    <${StageTable} stages=${stages.data} />
    <h2>Failed and skipped messages</h2>
    ${problems.data && problems.data.length === 0 ? html`<p class="muted">None.</p>` : ''}
    <ul class="messages">
      ${(problems.data ?? []).map(
        (message) => html`<li>
          <${Status} status=${message.status} /> <strong>${message.route_id} / ${message.stage}</strong>${' '}<span class="muted"
            >after ${plural(message.attempts, 'attempt')}</span
          >
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
          <${Status} status=${message.status} /> ${message.route_id} / ${message.stage}${' '}<span class="muted">from ${message.emitted_by}${message.duration_ms !== null ? `, ${message.duration_ms} ms` : ''}</span>
          ${message.error ? html`<div class="error-text">${message.error}</div>` : ''}
        </li>`,
      )}
    </ol>
  </section>`;
}
