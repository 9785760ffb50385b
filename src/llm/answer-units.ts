/**
 * A retrieved segment (markdown) cut into the units an extractive answer may quote:
 * - sentences of paragraphs, list items and quotes, with inline markdown removed (emphasis,
 *   link syntax, images, HTML) and code spans kept as code;
 * - table rows, each quoted with its header ("Port: Broker; State: both done"); a table with
 *   no header row (a segment that starts inside one) is left out, as are its bare pipe lines;
 * - fenced code blocks as code: whole, or a long one in snippets (at blank lines, then at a
 *   comment that follows a command), each still fenced code, so a question about one command
 *   gets that command and its comment rather than a whole page of shell.
 * Headings are never units: they are the context the units below them are read in.
 * A segment shares its first and last words with its neighbours (segmenter overlap), so a
 * first sentence that starts mid-sentence and a last one that stops mid-sentence are dropped.
 */
import { marked, type Token, type Tokens } from 'marked';

/**
 * `subject`: the term line the unit follows, what it says something about. `previous`: the
 * sentence before it in the same paragraph, which it goes on from. `opensSection`: the first
 * sentence under a heading of the segment, which says what the section is about.
 */
export type AnswerUnit =
  | {
      kind: 'sentence';
      text: string;
      headings: string[];
      subject?: string;
      previous?: string;
      opensSection?: true;
    }
  /** `key`: the row's first cell, what the row is about. */
  | { kind: 'row'; text: string; key: string; headings: string[] }
  | { kind: 'code'; text: string; language: string; headings: string[]; subject?: string };

/**
 * A longer sentence is quoted by its head: the clauses before a semicolon or colon that fit
 * (a 650-character sentence of the docs is otherwise never quoted).
 */
export const longSentenceCharacters = 420;

/** A code block longer than this is quoted in snippets. */
export const codeSnippetCharacters = 320;

/** Sentences end at . ! ? (or a colon before a list) followed by a space; not after these. */
const abbreviations = new Set([
  'e.g',
  'i.e',
  'etc',
  'vs',
  'cf',
  'approx',
  'incl',
  'fig',
  'dr',
  'mr',
  'mrs',
  'ms',
  'st',
  'jr',
  'sr',
  'ca',
  'f.eks',
  'bl.a',
  'dvs',
  'osv',
]);

/** The sentences of a plain-text paragraph, in order; none is cut in a word. */
export function splitSentences(text: string): string[] {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat === '') return [];
  const sentences: string[] = [];
  let start = 0;
  // A sentence boundary: terminal punctuation (and closing quotes or brackets), a space, then
  // something that can open a sentence (a capital, digit, quote, bracket or code span).
  const boundary = /([.!?])["')\]]*\s+(?=["'([`]?[\p{Lu}\p{N}`])/gu;
  for (const match of flat.matchAll(boundary)) {
    const end = (match.index ?? 0) + match[0].length;
    const candidate = flat.slice(start, end).trim();
    if (match[1] === '.' && endsWithAbbreviation(candidate)) continue;
    sentences.push(candidate);
    start = end;
  }
  const rest = flat.slice(start).trim();
  if (rest !== '') sentences.push(rest);
  return sentences;
}

function endsWithAbbreviation(sentence: string): boolean {
  const lastWord = /(\S+)\.["')\]]*$/u.exec(sentence)?.[1]?.toLowerCase() ?? '';
  const bare = lastWord.replace(/^[("'[]+/, '');
  // "e.g.", "U.S.", a single letter ("J. Smith"), or a number with its unit cut ("v2.")
  return abbreviations.has(bare) || /^(\p{L}\.)+\p{L}$/u.test(bare) || /^\p{L}$/u.test(bare);
}

/** Ends as a sentence does: with terminal punctuation, a closing quote or bracket, or code. */
export function endsComplete(sentence: string): boolean {
  return /[.!?:;`)"'\]]$/u.test(sentence.trim());
}

/** The units of one segment, in reading order (see the module comment). */
export function answerUnits(markdown: string): AnswerUnit[] {
  const units: AnswerUnit[] = [];
  const context: Context = { headings: [], term: undefined, underHeading: false };
  const tokens = marked.lexer(markdown);
  const lastBlock = lastContentIndex(tokens);
  tokens.forEach((token, index) => {
    // Only a segment that does not open with a heading can start inside a sentence.
    const first =
      index === firstContentIndex(tokens) && !tokens.slice(0, index).some((t) => t.type === 'heading');
    collect(token, units, context, { first, last: index === lastBlock });
  });
  return units;
}

interface Position {
  /** The segment's first block: its first sentence may start mid-sentence. */
  first: boolean;
  /** The segment's last block: its last sentence may stop mid-sentence. */
  last: boolean;
  /** In a list, where a short item is an answer ("Slack", "Teams"), not a term. */
  inList?: boolean;
  /** The paragraph right under a heading: its first sentence opens the section. */
  opensSection?: boolean;
}

/**
 * What a unit is read under: the headings above it in the segment, and the term it defines
 * when it follows a term line (a definition list's `gin_pending_list_limit` (`integer`), a
 * parameter name) as the PostgreSQL manual's settings and options pages are written.
 */
interface Context {
  headings: string[];
  term: string | undefined;
  /** Nothing quoted yet since the last heading. */
  underHeading: boolean;
}

const subjectOf = (context: Context) => (context.term === undefined ? {} : { subject: context.term });

function collect(token: Token, units: AnswerUnit[], context: Context, position: Position): void {
  const { headings } = context;
  switch (token.type) {
    case 'heading': {
      const heading = token as Tokens.Heading;
      headings.splice(Math.max(0, heading.depth - 1));
      headings.push(inlineText(heading.tokens));
      context.term = undefined;
      context.underHeading = true;
      return;
    }
    case 'paragraph':
    case 'text': {
      const block = token as Tokens.Paragraph | Tokens.Text;
      // Table lines the lexer did not read as a table (a segment cut inside one): left out.
      if (/^\s*\|/.test(block.raw)) return;
      const opensSection = context.underHeading && !position.inList;
      context.underHeading = false;
      pushSentences(block.tokens ? inlineText(block.tokens) : block.text, units, context, {
        ...position,
        opensSection,
      });
      return;
    }
    case 'list': {
      const list = token as Tokens.List;
      list.items.forEach((item, index) => {
        const itemPosition = {
          first: position.first && index === 0,
          last: position.last && index === list.items.length - 1,
          inList: true,
        };
        // "`MaxWords`, `MinWords` (integers): these numbers ...": the item defines its lead,
        // which is then the subject of the item's other sentences ("The default values are 35 and 15.").
        const outer = context.term;
        const lead = /^([^:.;!?]{1,80}):\s/u.exec(
          inlineText((item.tokens[0] as { tokens?: Token[] })?.tokens),
        )?.[1];
        if (lead) context.term = lead;
        for (const child of item.tokens) collect(child, units, context, itemPosition);
        context.term = outer;
      });
      return;
    }
    case 'blockquote':
      for (const child of (token as Tokens.Blockquote).tokens) collect(child, units, context, position);
      return;
    case 'table':
      context.underHeading = false;
      pushRows(token as Tokens.Table, units, [...headings]);
      return;
    case 'code': {
      const code = token as Tokens.Code;
      const text = code.text.replace(/\s+$/, '');
      context.underHeading = false;
      if (text.trim() !== '')
        units.push({
          kind: 'code',
          text,
          language: code.lang?.split(/\s/)[0] ?? '',
          headings: [...headings],
          ...subjectOf(context),
        });
      return;
    }
    default:
      return; // space, hr, html, def: nothing to quote
  }
}

/** A line that names rather than says: short, one line, no sentence end. */
function isTermLine(sentences: readonly string[]): boolean {
  const [only] = sentences;
  return (
    sentences.length === 1 && only !== undefined && only.length <= 100 && !/[.!?:;]["')\]]*$/u.test(only)
  );
}

function pushSentences(text: string, units: AnswerUnit[], context: Context, position: Position): void {
  const sentences = splitSentences(text);
  // A term line is not quoted: it is the subject of the sentences after it.
  if (isTermLine(sentences) && !position.last && !position.inList) {
    context.term = sentences[0];
    return;
  }
  sentences.forEach((sentence, index) => {
    if (position.first && index === 0 && /^[\p{Ll},;)]/u.test(sentence)) return;
    if (position.last && index === sentences.length - 1 && !endsComplete(sentence)) return;
    if (!/\p{L}/u.test(sentence)) return;
    const quoted = sentence.length > longSentenceCharacters ? headClauses(sentence) : sentence;
    const previous = sentences[index - 1];
    if (quoted)
      units.push({
        kind: 'sentence',
        text: quoted,
        headings: [...context.headings],
        ...subjectOf(context),
        ...(previous === undefined ? {} : { previous }),
        ...(position.opensSection && index === 0 ? { opensSection: true as const } : {}),
      });
  });
}

/** The longest run of whole clauses from the start that fits, ending at `;` or `:`. */
function headClauses(sentence: string): string | undefined {
  let head: string | undefined;
  for (const match of sentence.matchAll(/[;:](?=\s)/g)) {
    const end = (match.index ?? 0) + 1;
    if (end > longSentenceCharacters) break;
    if (end >= 60 && balanced(sentence.slice(0, end))) head = sentence.slice(0, end);
  }
  return head;
}

/** No bracket or code span left open. */
function balanced(text: string): boolean {
  const count = (pattern: RegExp) => text.match(pattern)?.length ?? 0;
  return count(/\(/g) === count(/\)/g) && count(/\[/g) === count(/\]/g) && count(/`/g) % 2 === 0;
}

function pushRows(table: Tokens.Table, units: AnswerUnit[], headings: string[]): void {
  const header = table.header.map((cell) => inlineText(cell.tokens).trim());
  if (header.every((cell) => cell === '')) return;
  for (const row of table.rows) {
    const fields = row
      .map((cell, column) => ({ name: header[column] ?? '', value: inlineText(cell.tokens).trim() }))
      .filter((field) => field.value !== '');
    if (fields.length === 0) continue;
    const text = fields
      .map((field) => (field.name ? `${field.name}: ${field.value}` : field.value))
      .join('; ');
    units.push({ kind: 'row', text, key: fields[0]?.value ?? '', headings: [...headings] });
  }
}

/** The block whole when short; else its paragraphs, and a long one cut before each comment that follows code. */
export function codeSnippets(code: string): string[] {
  const text = code.replace(/\s+$/, '').replace(/^\s*\n/, '');
  if (text.trim() === '') return [];
  if (text.length <= codeSnippetCharacters) return [text];
  const comment = /^\s*(#|\/\/|--)/;
  return text
    .split(/\n\s*\n/)
    .flatMap((paragraph) => {
      if (paragraph.length <= codeSnippetCharacters) return [paragraph];
      const pieces: string[][] = [[]];
      let previousWasCode = false;
      for (const line of paragraph.split('\n')) {
        const isComment = comment.test(line);
        if (isComment && previousWasCode) pieces.push([]);
        (pieces.at(-1) as string[]).push(line);
        previousWasCode = !isComment && line.trim() !== '';
      }
      return pieces.map((lines) => lines.join('\n'));
    })
    .map((snippet) => snippet.replace(/\s+$/, ''))
    .filter((snippet) => snippet.trim() !== '');
}

/** Inline markdown as plain text: emphasis and links give their text, code spans stay code. */
export function inlineText(tokens: readonly Token[] | undefined): string {
  if (!tokens) return '';
  return tokens
    .map((token) => {
      switch (token.type) {
        case 'codespan':
          return `\`${(token as Tokens.Codespan).text}\``;
        case 'br':
          return ' ';
        case 'html':
        case 'image':
          return '';
        case 'escape':
          return (token as Tokens.Escape).text;
        default: {
          const withTokens = token as { tokens?: Token[]; text?: string };
          return withTokens.tokens ? inlineText(withTokens.tokens) : (withTokens.text ?? '');
        }
      }
    })
    .join('')
    .replace(/\s+/g, ' ');
}

const quotable = new Set(['paragraph', 'text', 'list', 'blockquote', 'table', 'code']);

function firstContentIndex(tokens: readonly Token[]): number {
  return tokens.findIndex((token) => quotable.has(token.type));
}

function lastContentIndex(tokens: readonly Token[]): number {
  return tokens.findLastIndex((token) => quotable.has(token.type));
}
