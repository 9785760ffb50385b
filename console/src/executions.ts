/**
 * How the console names an execution (issue 31): its config's name, tag, when it started,
 * how long it ran, its messages and its outcome; the UUID one click away (CopyId).
 */
import { CopyId, formatDuration, html, plural, when } from './ui.js';

export interface MessageCounts {
  total: number;
  completed: number;
  failed: number;
  skipped: number;
  queued: number;
}
export interface Execution {
  id: string;
  config_id: string;
  config_version: number;
  config_name: string | null;
  status: string;
  outcome: string | null;
  first_errors: Array<{ route_id: string; stage: string; status: string; error: string | null }>;
  message_counts: MessageCounts;
  tag: string | null;
  error: string | null;
  created_at: string;
  finished_at: string | null;
}

/** How long it ran, or has been running. */
export function runDuration(execution: Execution, now = Date.now()): string {
  const end = execution.finished_at ? Date.parse(execution.finished_at) : now;
  return formatDuration(end - Date.parse(execution.created_at));
}

/** `21 messages: 10 failed, 1 skipped, 3 queued` (the parts that are not zero). */
export function countsText(counts: MessageCounts | undefined): string {
  if (!counts) return '';
  const parts = [
    counts.failed ? `${counts.failed} failed` : '',
    counts.skipped ? `${counts.skipped} skipped` : '',
    counts.queued ? `${counts.queued} queued` : '',
  ].filter(Boolean);
  return `${plural(counts.total, 'message')}${parts.length ? `: ${parts.join(', ')}` : ''}`;
}

/** The first failed or skipped message of a partial or empty run: why it needs attention. */
export function firstError(row: Execution): string {
  const first = row.first_errors?.[0];
  return first ? `${first.route_id} / ${first.stage}: ${first.error ?? first.status}` : '';
}

/** The config's name (linked to the execution), its tag, and the UUID to copy. */
export function ExecutionName({ execution, link = true }: { execution: Execution; link?: boolean }) {
  const name = execution.config_name ?? 'deleted config';
  return html`<span class="execution-name">
    ${link ? html`<a href=${`#/executions/${execution.id}`}>${name}</a>` : html`<strong>${name}</strong>`}
    <span class="muted"> v${execution.config_version}</span>
    ${execution.tag ? html` <span class="tag" title="tag">${execution.tag}</span>` : ''}
    ${' '}<${CopyId} id=${execution.id} label="execution id" />
  </span>`;
}

/** Started at, for a table cell: the local time, with the ISO time in the title. */
export function Started({ execution }: { execution: Execution }) {
  return html`<time datetime=${execution.created_at} title=${execution.created_at}>${when(execution.created_at)}</time>`;
}
