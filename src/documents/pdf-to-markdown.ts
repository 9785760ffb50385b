/**
 * PDF to markdown with pdf.js (the legacy build, which runs in Node without a canvas). pdf.js
 * gives positioned text runs; this module rebuilds lines from their baselines, paragraphs from
 * the vertical gaps between lines, bullet lists from leading bullet glyphs, and headings from
 * font sizes larger than the body text (the most used size), ranked into levels.
 *
 * pdf.js parses in this thread (its "fake worker"), one page at a time, so the page and time
 * budgets are checked between pages and the loading task is destroyed when time runs out.
 */
import {
  type ConversionLimits,
  type ConvertedDocument,
  DocumentError,
  withinBudget,
} from './document-error.js';

interface TextRun {
  str: string;
  transform: number[];
  width: number;
  hasEOL?: boolean;
}

/** One visual line of a page. */
export interface PdfLine {
  text: string;
  /** Font size (points) of most of the line's characters. */
  size: number;
  /** Baseline, from the bottom of the page. */
  y: number;
  x: number;
  page: number;
}

export async function pdfToMarkdown(data: Uint8Array, limits: ConversionLimits): Promise<ConvertedDocument> {
  // Loaded on first use: pdf.js is large and most processes never read a PDF.
  const { getDocument } = await import('pdfjs-dist/legacy/build/pdf.mjs');
  // pdf.js takes ownership of (detaches) the buffer it is given: hand it a copy.
  const task = getDocument({
    data: new Uint8Array(data),
    verbosity: 0,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
  });
  const deadline = performance.now() + limits.timeoutMs;
  const work = async (): Promise<ConvertedDocument> => {
    const pdf = await task.promise;
    const { info } = (await pdf.getMetadata().catch(() => ({ info: {} }))) as {
      info: Record<string, unknown>;
    };
    const pageCount = pdf.numPages;
    const pagesToRead = Math.min(pageCount, limits.maxPages);
    const lines: PdfLine[] = [];
    for (let number = 1; number <= pagesToRead; number++) {
      // pdf.js may keep the event loop busy with microtasks, so the timer of withinBudget can
      // fire late: the budget is also checked here, between pages.
      if (limits.signal?.aborted) throw new DocumentError('PDF conversion was cancelled');
      if (performance.now() > deadline) throw overTime(limits);
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      lines.push(...linesOfPage(content.items as TextRun[], number));
      page.cleanup();
    }
    const markdown = linesToMarkdown(lines);
    const firstHeading = /^#{1,6} (.+)$/m.exec(markdown)?.[1];
    const firstLine = markdown.split('\n', 1)[0]?.replace(/^[#>*\s-]+/, '') ?? '';
    return {
      markdown,
      title: stringField(info.Title) || firstHeading || firstLine.slice(0, 200),
      declaredLanguage: stringField(info.Language),
      description: stringField(info.Subject),
      pageCount,
      ...(pagesToRead < pageCount ? { pagesConverted: pagesToRead } : {}),
    };
  };
  try {
    return await withinBudget('PDF conversion', limits, work, () => void task.destroy()).catch(
      (error: unknown) => {
        throw error instanceof DocumentError ? error : describePdfError(error);
      },
    );
  } finally {
    await task.destroy().catch(() => undefined);
  }
}

function overTime(limits: ConversionLimits): DocumentError {
  return new DocumentError(`PDF conversion took longer than ${limits.timeoutMs} ms (timeout_seconds)`);
}

function stringField(value: unknown): string {
  return typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : '';
}

function describePdfError(error: unknown): DocumentError {
  const name = error instanceof Error ? error.name : '';
  const message = error instanceof Error ? error.message : String(error);
  if (name === 'PasswordException')
    return new DocumentError('PDF is encrypted with a password; it cannot be read');
  if (name === 'InvalidPDFException') return new DocumentError(`not a readable PDF: ${message}`);
  return new DocumentError(`PDF could not be parsed: ${message}`);
}

/** Groups a page's text runs into lines by baseline, in content order. */
export function linesOfPage(runs: readonly TextRun[], page: number): PdfLine[] {
  const lines: PdfLine[] = [];
  let current: { parts: string[]; sizes: Map<number, number>; y: number; x: number; end: number } | undefined;
  const flush = () => {
    if (!current) return;
    const text = current.parts.join('').replace(/\s+/g, ' ').trim();
    if (text) {
      let size = 0;
      let most = -1;
      for (const [candidate, count] of current.sizes)
        if (count > most || (count === most && candidate > size)) [size, most] = [candidate, count];
      lines.push({ text, size, y: current.y, x: current.x, page });
    }
    current = undefined;
  };
  for (const run of runs) {
    const [a = 0, b = 0, , , x = 0, y = 0] = run.transform;
    const size = Math.round(Math.hypot(a, b) * 2) / 2 || 1;
    if (run.str === '') {
      if (run.hasEOL) flush();
      continue;
    }
    if (current && Math.abs(current.y - y) > size * 0.4) flush();
    if (!current) current = { parts: [], sizes: new Map(), y, x, end: x };
    // A gap wider than a fifth of the font size between runs is a word space the PDF left out.
    const gap = x - current.end;
    const last = current.parts.at(-1) ?? '';
    if (current.parts.length > 0 && gap > size * 0.2 && !/\s$/.test(last) && !/^\s/.test(run.str))
      current.parts.push(' ');
    current.parts.push(run.str);
    current.sizes.set(size, (current.sizes.get(size) ?? 0) + run.str.length);
    current.end = x + run.width;
    if (run.hasEOL) flush();
  }
  flush();
  return dropPageNumbers(lines);
}

/** A bare page number (`3`, `Page 3`, `3 of 10`, `- 3 -`) first or last on a page is furniture. */
function dropPageNumbers(lines: PdfLine[]): PdfLine[] {
  const isNumber = (line: PdfLine | undefined) =>
    line !== undefined && /^(?:page\s+)?[-–\s]*\d{1,5}(?:\s*(?:of|\/)\s*\d{1,5})?[-–\s]*$/i.test(line.text);
  const kept = [...lines];
  if (isNumber(kept.at(-1))) kept.pop();
  if (isNumber(kept[0])) kept.shift();
  return kept;
}

const bullet = /^(?:[•◦▪▫●○■□‣⁃∙·]\s*|[-–*]\s+)/;
const numbered = /^(\d{1,3}|[a-z])[.)]\s+/i;

/** Lines of the whole document to markdown blocks. */
export function linesToMarkdown(lines: readonly PdfLine[]): string {
  if (lines.length === 0) return '';
  const bodySize = dominantSize(lines);
  const headingLevel = headingLevels(lines, bodySize);
  const blocks: string[] = [];
  let paragraph: string[] = [];
  let previous: PdfLine | undefined;
  const endParagraph = () => {
    if (paragraph.length > 0) blocks.push(joinLines(paragraph));
    paragraph = [];
  };
  for (const line of lines) {
    const level = headingLevel.get(line.size);
    if (level !== undefined && line.text.length <= 200) {
      const prior = blocks.at(-1);
      // A heading wrapped over two lines arrives as two heading lines of one size.
      if (
        paragraph.length === 0 &&
        previous?.size === line.size &&
        previous.page === line.page &&
        prior?.startsWith('#')
      )
        blocks[blocks.length - 1] = `${prior} ${line.text}`;
      else {
        endParagraph();
        blocks.push(`${'#'.repeat(level)} ${line.text}`);
      }
      previous = line;
      continue;
    }
    const listItem = bullet.test(line.text) ? `- ${line.text.replace(bullet, '')}` : undefined;
    const orderedItem = numbered.exec(line.text) ? line.text : undefined;
    const newBlock =
      previous === undefined ||
      previous.page !== line.page ||
      previous.size !== line.size ||
      headingLevel.has(previous.size) ||
      previous.y - line.y > line.size * 1.6 ||
      previous.y < line.y; // a new column or a jump back up the page
    if (listItem !== undefined || orderedItem !== undefined) {
      endParagraph();
      paragraph.push(listItem ?? escapeLeading(orderedItem as string, false));
    } else if (
      newBlock &&
      !(previous && previous.page !== line.page && continuesAcrossPages(paragraph, line))
    ) {
      endParagraph();
      paragraph.push(escapeLeading(line.text, true));
    } else {
      paragraph.push(line.text);
    }
    previous = line;
  }
  endParagraph();
  return `${mergeLists(blocks).join('\n\n')}\n`;
}

/** A paragraph cut by a page break: the last line has no closing punctuation, the next starts lowercase. */
function continuesAcrossPages(paragraph: readonly string[], line: PdfLine): boolean {
  const last = paragraph.at(-1);
  return last !== undefined && !/[.!?:;)]$/.test(last) && /^\p{Ll}/u.test(line.text);
}

/** Adjacent list items form one list (no blank lines between them). */
function mergeLists(blocks: string[]): string[] {
  const merged: string[] = [];
  const isItem = (block: string) => block.startsWith('- ') || /^\d{1,3}[.)] /.test(block);
  for (const block of blocks) {
    const previous = merged.at(-1);
    if (previous !== undefined && isItem(block) && isItem(previous.split('\n').at(-1) ?? ''))
      merged[merged.length - 1] = `${previous}\n${block}`;
    else merged.push(block);
  }
  return merged;
}

/** Joins wrapped lines, mending words hyphenated at a line end (`conver-` + `sion`). */
function joinLines(lines: readonly string[]): string {
  let text = lines[0] ?? '';
  for (const line of lines.slice(1)) {
    if (/\p{Ll}-$/u.test(text) && /^\p{Ll}/u.test(line)) text = text.slice(0, -1) + line;
    else text = `${text} ${line}`;
  }
  return text;
}

/** Text that would read as markdown syntax at the start of a block is escaped. */
function escapeLeading(text: string, escapeNumbers: boolean): string {
  if (/^(#{1,6}\s|>|[+*]\s|={3,}|_{3,})/.test(text)) return `\\${text}`;
  if (escapeNumbers) return text.replace(/^(\d{1,9})([.)]\s)/, '$1\\$2');
  return text;
}

/** The font size carrying the most characters: the body text. */
function dominantSize(lines: readonly PdfLine[]): number {
  const weight = new Map<number, number>();
  for (const line of lines) weight.set(line.size, (weight.get(line.size) ?? 0) + line.text.length);
  let best = 0;
  let most = -1;
  for (const [size, count] of weight) if (count > most) [best, most] = [size, count];
  return best;
}

/**
 * Sizes clearly larger than the body (15 % or more) used by short lines are headings, the
 * largest being level 1; at most six levels, the smallest extra sizes sharing level 6.
 */
function headingLevels(lines: readonly PdfLine[], bodySize: number): Map<number, number> {
  const sizes = new Set<number>();
  for (const line of lines) if (line.size >= bodySize * 1.15 && line.text.length <= 200) sizes.add(line.size);
  const ranked = [...sizes].sort((a, b) => b - a);
  return new Map(ranked.map((size, index) => [size, Math.min(index + 1, 6)]));
}
