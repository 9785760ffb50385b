/**
 * A validation report as the config editor shows it: findings that share a cause collapsed
 * into one entry, "5 × E100 …", which opens on the list of them, each jumping to its place in
 * the editor. One indentation slip yields several parse errors (E100) at neighbouring lines,
 * each a consequence of the first: the reader needs the cause once. Other findings share a
 * cause when they have the same code and the same message once the values in it are set aside
 * (three adapter types that are not registered).
 */
import type { JumpTo, Located } from './editor.js';
import { html, plural } from './ui.js';

export interface Finding extends Located {
  path: string;
  remediation: string;
}
export interface Report {
  is_valid: boolean;
  error_count: number;
  warning_count: number;
  findings: Finding[];
}

export interface FindingGroup {
  /** The first finding, which words the group. */
  first: Finding;
  members: Finding[];
}

/** The cause of a finding: its code and message with the quoted values and numbers taken out. */
function causeOf(finding: Finding): string {
  // The parser's errors after the first are where it lost its footing: one cause.
  if (finding.code === 'E100') return 'E100';
  const message = finding.message
    .replace(/"[^"]*"|'[^']*'|`[^`]*`/g, '…')
    .replace(/\d+/g, '#')
    .replace(/\S+\.\S+/g, '…');
  return `${finding.severity} ${finding.code} ${message}`;
}

export function groupFindings(findings: readonly Finding[]): FindingGroup[] {
  const groups = new Map<string, FindingGroup>();
  for (const finding of findings) {
    const cause = causeOf(finding);
    const group = groups.get(cause);
    if (group) group.members.push(finding);
    else groups.set(cause, { first: finding, members: [finding] });
  }
  return [...groups.values()];
}

const where = (finding: Finding) =>
  finding.line ? `line ${finding.line}, column ${finding.column}` : finding.path || 'the config';

function Place({ finding, jumpTo }: { finding: Finding; jumpTo: JumpTo | undefined }) {
  return finding.line && jumpTo
    ? html`<button type="button" class="link place" title="Show it in the editor" onClick=${() => jumpTo(finding)}>${where(finding)}</button>`
    : html`<strong>${where(finding)}</strong>`;
}

export function ReportView({ report, jumpTo }: { report: Report; jumpTo?: JumpTo | undefined }) {
  const groups = groupFindings(report.findings);
  return html`<div class="report" aria-label="Validation report">
    <p class=${report.is_valid ? 'ok' : 'bad'}>
      ${report.is_valid ? 'Valid' : 'Invalid'}: ${plural(report.error_count, 'error')}, ${plural(report.warning_count, 'warning')}
    </p>
    <ul class="findings">
      ${groups.map(({ first, members }) =>
        members.length === 1
          ? html`<li class=${first.severity}>
              <${Place} finding=${first} jumpTo=${jumpTo} />${' '}<${Code} finding=${first} />${' '}${first.message}
              <div class="muted">${first.remediation}</div>
            </li>`
          : html`<li class=${first.severity}>
              <details>
                <summary><strong class="count">${members.length} ×</strong>${' '}<${Code} finding=${first} />${' '}${first.message}${' '}<span class="muted">(first at ${where(first)})</span></summary>
                <ul class="places">
                  ${members.map(
                    (finding) =>
                      html`<li><${Place} finding=${finding} jumpTo=${jumpTo} />: ${finding.message}</li>`,
                  )}
                </ul>
              </details>
              <div class="muted">${first.remediation}</div>
            </li>`,
      )}
    </ul>
  </div>`;
}

function Code({ finding }: { finding: Finding }) {
  return html`<a href=${`#/docs/validation-codes?code=${finding.code}`} class="code" target="_blank" title="What this code means (docs/validation-codes.md)">${finding.code}</a>`;
}
