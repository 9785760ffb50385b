/**
 * The config editor: CodeMirror 6 with line numbers, YAML highlighting, undo history and a
 * marker in the gutter (and a wavy underline) at each validation finding, which a click on the
 * finding jumps to (`jumpTo`). The page keeps the text; the editor reports each change.
 */
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { yaml } from '@codemirror/lang-yaml';
import {
  bracketMatching,
  defaultHighlightStyle,
  HighlightStyle,
  indentOnInput,
  syntaxHighlighting,
} from '@codemirror/language';
import { type Diagnostic, lintGutter, setDiagnostics } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import {
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
} from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { useEffect, useRef } from 'preact/hooks';
import { html } from './ui.js';

export interface Located {
  severity: string;
  message: string;
  code: string;
  line?: number | undefined;
  column?: number | undefined;
}

/**
 * YAML's own tags (@lezer/yaml): keys, quoted strings, comments, anchors and tags, the dashes
 * and colons. CodeMirror's default style leaves keys and separators unstyled.
 */
const yamlStyle = HighlightStyle.define([
  { tag: tags.definition(tags.propertyName), color: '#1f4e8c', fontWeight: '600' },
  { tag: tags.string, color: '#1d6b35' },
  { tag: tags.special(tags.string), color: '#8a5a00' },
  { tag: tags.lineComment, color: '#6b7280', fontStyle: 'italic' },
  { tag: [tags.labelName, tags.typeName], color: '#7a3e9d' },
  { tag: [tags.separator, tags.punctuation, tags.squareBracket, tags.brace], color: '#8a5a00' },
  { tag: [tags.meta, tags.keyword], color: '#b42318' },
]);

/**
 * The nonce the page's content security policy gives style elements (src/api/console.ts): the
 * editor's styles go into a style element of its own, which the policy blocks without it.
 */
const styleNonce = document.querySelector<HTMLMetaElement>('meta[name="weir-style-nonce"]')?.content ?? '';

/** Where a finding points: its line and column, clamped to the text. */
function positionOf(state: EditorState, finding: Located): { from: number; to: number } | undefined {
  if (!finding.line) return undefined;
  const line = state.doc.line(Math.min(Math.max(finding.line, 1), state.doc.lines));
  const from = Math.min(line.from + Math.max((finding.column ?? 1) - 1, 0), line.to);
  return { from, to: Math.max(line.to, from) };
}

function diagnosticsOf(state: EditorState, findings: readonly Located[]): Diagnostic[] {
  return findings.flatMap((finding) => {
    const position = positionOf(state, finding);
    if (!position) return [];
    return [
      {
        ...position,
        severity: finding.severity === 'error' ? 'error' : 'warning',
        message: `${finding.code} ${finding.message}`,
      },
    ];
  });
}

/** Moves the cursor to a finding and scrolls it into view. */
export type JumpTo = (finding: Located) => void;

export function YamlEditor({
  value,
  label,
  findings,
  onChange,
  onReady,
}: {
  value: string;
  label: string;
  findings: readonly Located[];
  onChange: (text: string) => void;
  onReady?: (jumpTo: JumpTo) => void;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | undefined>(undefined);
  const changed = useRef(onChange);
  changed.current = onChange;
  /** True while the text given from outside is laid in: not a change of the person's. */
  const replacing = useRef(false);

  // One editor for the component's life; the text and findings are laid over it below.
  useEffect(() => {
    if (!host.current) return;
    const editor = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: value,
        extensions: [
          lineNumbers(),
          highlightActiveLineGutter(),
          highlightActiveLine(),
          history(),
          indentOnInput(),
          bracketMatching(),
          syntaxHighlighting(yamlStyle),
          syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
          yaml(),
          lintGutter(),
          ...(styleNonce ? [EditorView.cspNonce.of(styleNonce)] : []),
          keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
          EditorView.contentAttributes.of({ 'aria-label': label, spellcheck: 'false' }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged && !replacing.current) changed.current(update.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = editor;
    onReady?.((finding) => {
      const position = positionOf(editor.state, finding);
      if (!position) return;
      editor.dispatch({ selection: { anchor: position.from }, scrollIntoView: true });
      editor.focus();
    });
    return () => editor.destroy();
  }, []);

  // Text from outside (the config loaded after the editor was made): replace the document.
  useEffect(() => {
    const editor = view.current;
    if (!editor || editor.state.doc.toString() === value) return;
    replacing.current = true;
    try {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
    } finally {
      replacing.current = false;
    }
  }, [value]);

  useEffect(() => {
    const editor = view.current;
    if (editor) editor.dispatch(setDiagnostics(editor.state, diagnosticsOf(editor.state, findings)));
  }, [findings, value]);

  return html`<div class="code-editor" ref=${host}></div>`;
}
