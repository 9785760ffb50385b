/**
 * Configs: the list with validity and runnable flags, creation time and id (two configs of the
 * same YAML are told apart), and a CodeMirror editor (editor.ts) validated as it is typed,
 * with a marker at each finding's line and findings of one cause collapsed (findings.ts);
 * create, update, deactivate, and run once the config is valid.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import type { YamlEditor as Editor, JumpTo } from '../editor.js';
import { type Report, ReportView } from '../findings.js';
import { CopyId, ErrorText, html, plural, useLoad, when } from '../ui.js';

/** Quiet time after typing before the text is validated again. */
const VALIDATE_AFTER_MS = 600;

interface Config {
  id: string;
  name: string;
  description: string | null;
  version: number;
  origin: string;
  is_active: boolean;
  is_runnable: boolean;
  created_at: string;
  updated_at: string;
  config_yaml?: string;
  validation_report: Report;
}

export function Configs() {
  const list = useLoad(() => api<{ configs: Config[] }>('/configs?limit=100'), []);
  return html`<section>
    <h1>Configs</h1>
    <p><a class="button" href="#/configs/new">New config</a></p>
    <${ErrorText} error=${list.error} />
    <div class="table-wrap"><table>
      <thead><tr><th>Name</th><th>Version</th><th>Valid</th><th>Runnable</th><th>Active</th><th>Created</th><th>Updated</th></tr></thead>
      <tbody>
        ${(list.data?.configs ?? []).map(
          (config) => html`<tr>
            <td>
              <a href=${`#/configs/${config.id}`}>${config.name}</a>${' '}<${CopyId} id=${config.id} label="config id" />
              <div class="muted clip">${config.description ?? ''}${config.origin === 'api' ? '' : html` <span class="tag" title="where the YAML came from">${config.origin}</span>`}</div>
            </td>
            <td>${config.version}</td>
            <td>${config.validation_report.is_valid ? 'yes' : html`<span class="bad">no (${plural(config.validation_report.error_count, 'error')})</span>`}</td>
            <td>${config.is_runnable ? 'yes' : 'no'}</td>
            <td>${config.is_active ? 'yes' : 'no'}</td>
            <td>${when(config.created_at)}</td>
            <td>${when(config.updated_at)}</td>
          </tr>`,
        )}
      </tbody>
    </table></div>
  </section>`;
}

const starter = `name: my-pipeline
description: Index a folder of markdown files.
init_message:
  route: list
  payload:
    root: ./docs
routes:
  - id: list
    adapters:
      - type: fileshare_enumerator
        config:
          extensions: [.md]
        destination: documents
  - id: documents
    adapters:
      - type: fileshare_fetcher
      - type: document_converter
      - type: smart_segmenter
      - type: segment_publisher
        destination: embed
  - id: embed
    adapters:
      - type: embedding_generator
`;

export function ConfigEditor({ id, created }: { id: string; created?: boolean }) {
  const isNew = id === 'new';
  const loaded = useLoad(() => (isNew ? Promise.resolve(undefined) : api<Config>(`/configs/${id}`)), [id]);
  const [yaml, setYaml] = useState<string | undefined>(undefined);
  const [report, setReport] = useState<Report | undefined>(undefined);
  const [message, setMessage] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [runOpen, setRunOpen] = useState(false);
  const text = yaml ?? loaded.data?.config_yaml ?? (isNew ? starter : '');

  async function act(action: () => Promise<void>) {
    setError(undefined);
    setMessage(undefined);
    try {
      await action();
    } catch (failure) {
      setError((failure as Error).message);
    }
  }
  const validate = () =>
    act(async () => {
      setReport(await api<Report>('/configs/validate', { body: { config_yaml: text } }));
    });
  // Validated as it is typed, so the markers follow the text.
  const typed = useRef(false);
  useEffect(() => {
    if (!typed.current) return;
    const timer = setTimeout(() => {
      api<Report>('/configs/validate', { body: { config_yaml: text } })
        .then(setReport)
        .catch(() => {});
    }, VALIDATE_AFTER_MS);
    return () => clearTimeout(timer);
  }, [text]);
  const [jumpTo, setJumpTo] = useState<JumpTo | undefined>(undefined);
  const save = () =>
    act(async () => {
      const saved = isNew
        ? await api<Config>('/configs', { body: { config_yaml: text } })
        : await api<Config>(`/configs/${id}`, { method: 'PUT', body: { config_yaml: text } });
      setReport(saved.validation_report);
      setMessage(`Saved version ${saved.version}.`);
      if (isNew) location.hash = `#/configs/${saved.id}?created=1`;
      else loaded.reload();
    });
  const deactivate = () =>
    act(async () => {
      await api(`/configs/${id}`, { method: 'DELETE' });
      location.hash = '#/configs';
    });
  const shown = report ?? loaded.data?.validation_report;
  // Run runs the saved version: offered only when it can run and the text shown is valid.
  const runBlocked = !loaded.data?.is_runnable
    ? 'This config cannot run: fix its errors and save it.'
    : shown && !shown.is_valid
      ? 'The config has errors: fix them (and save) before running it.'
      : undefined;
  return html`<section>
    <h1>${isNew ? 'New config' : (loaded.data?.name ?? 'Config')}</h1>
    <${ErrorText} error=${loaded.error ?? error} />
    ${message || (created && loaded.data) ? html`<p class="ok" role="status">${message ?? `Saved version ${loaded.data?.version}.`}</p>` : ''}
    <p class="label" id="yaml-label">Pipeline YAML</p>
    <${LazyEditor}
      value=${text}
      label="Pipeline YAML"
      findings=${shown?.findings ?? []}
      onChange=${(value: string) => {
        typed.current = true;
        setYaml(value);
      }}
      onReady=${(jump: JumpTo) => setJumpTo(() => jump)} />
    <div class="actions">
      <button type="button" onClick=${validate}>Validate</button>
      <button type="button" onClick=${save}>${isNew ? 'Create' : 'Save'}</button>
      ${
        isNew
          ? ''
          : html`<button type="button" disabled=${runBlocked !== undefined} title=${runBlocked ?? 'Run the saved version'} onClick=${() => setRunOpen(true)}>Run…</button>
        <button type="button" class="danger" onClick=${deactivate}>Deactivate</button>`
      }
    </div>
    ${runBlocked && !isNew ? html`<p class="muted" role="note">${runBlocked}</p>` : ''}
    ${shown ? html`<${ReportView} report=${shown} jumpTo=${jumpTo} />` : ''}
    ${runOpen ? html`<${RunDialog} configId=${id} onClose=${() => setRunOpen(false)} />` : ''}
  </section>`;
}

/** CodeMirror is three times the rest of the console: loaded (once) when a config is opened. */
let editorModule: Promise<typeof import('../editor.js')> | undefined;

function LazyEditor(props: Parameters<typeof Editor>[0]) {
  const [loaded, setLoaded] = useState<typeof Editor | undefined>(undefined);
  const [failed, setFailed] = useState<string | undefined>(undefined);
  useEffect(() => {
    editorModule ??= import('../editor.js');
    editorModule
      .then((module) => setLoaded(() => module.YamlEditor))
      .catch((error: Error) => setFailed(error.message));
  }, []);
  if (failed) return html`<${ErrorText} error=${`The editor did not load: ${failed}`} />`;
  return loaded ? html`<${loaded} ...${props} />` : html`<p class="muted">Loading the editor…</p>`;
}

function RunDialog({ configId, onClose }: { configId: string; onClose: () => void }) {
  const [payload, setPayload] = useState('');
  const [tag, setTag] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  async function run(event: Event) {
    event.preventDefault();
    try {
      // The body is merged over the YAML's init payload; the tag is a query parameter.
      const body = payload.trim() ? JSON.parse(payload) : {};
      const query = tag.trim() ? `?tag=${encodeURIComponent(tag.trim())}` : '';
      const execution = await api<{ id: string }>(`/configs/${configId}/run${query}`, { body });
      location.hash = `#/executions/${execution.id}`;
    } catch (failure) {
      setError((failure as Error).message);
    }
  }
  return html`<form class="dialog" role="dialog" aria-label="Run config" onSubmit=${run}>
    <h2>Run</h2>
    <${ErrorText} error=${error} />
    <label for="payload">Init payload fields (JSON, merged over the config's own; empty for none)</label>
    <textarea id="payload" rows="4" value=${payload} onInput=${(event: Event) => setPayload((event.target as HTMLTextAreaElement).value)}></textarea>
    <label for="tag">Tag (optional)</label>
    <input id="tag" value=${tag} onInput=${(event: Event) => setTag((event.target as HTMLInputElement).value)} />
    <div class="actions"><button type="submit">Run now</button><button type="button" onClick=${onClose}>Cancel</button></div>
  </form>`;
}
