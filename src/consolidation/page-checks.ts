/**
 * structural_validator's checks of a concept page. Each finding has a stable code,
 * documented in docs/knowledge.md ("Page findings"); a page with an error is not published.
 */

import { sourcesHeading, structuralHeadings } from './concept-page.js';
import type { Passage } from './passages.js';

export type PageFindingCode = 'K101' | 'K102' | 'K103' | 'K104' | 'K105' | 'K106' | 'K107' | 'K108' | 'K109';

export interface PageFinding {
  code: PageFindingCode;
  severity: 'error' | 'warning';
  message: string;
  /** 1-based line of the page the finding is about, when it is about one. */
  line?: number;
}

export interface PageCheckOptions {
  minWords: number;
  maxWords: number;
  minSources: number;
  /** Largest share of the page's citations one source may have (0..1). */
  maxSourceShare: number;
  /** Codes reported as warnings instead of errors (they do not stop publication). */
  warnOnly: readonly PageFindingCode[];
}

export const pageCheckDefaults: PageCheckOptions = {
  minWords: 20,
  maxWords: 2500,
  minSources: 2,
  maxSourceShare: 0.75,
  warnOnly: [],
};

export const pageFindingTitles: Record<PageFindingCode, string> = {
  K101: 'citation does not resolve to a loaded passage',
  K102: 'paragraph cites nothing',
  K103: 'page shorter than min_words',
  K104: 'page longer than max_words',
  K105: 'fewer distinct sources cited than min_sources',
  K106: 'one source holds more than max_source_share of the citations',
  K107: 'link to a concept that does not exist',
  K108: 'page has no title',
  K109: 'no page: no passage of the sources names the concept',
};

const citationPattern = /\[(\d+)\]/g;
const linkPattern = /\[[^\]]*\]\(([^)\s]+)\)/g;

/**
 * Words a reader reads on the line: citation markers (`[3]`, `[1, 2]`), link targets, URLs and
 * HTML tags are not prose, so a page padded with citations or links does not pass min_words.
 */
export function proseWords(line: string): number {
  const prose = line
    .replace(/\[\d+(?:\s*[,;–-]\s*\d+)*\]/g, ' ')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, ' ');
  return (prose.match(/[\p{L}\p{N}]+/gu) ?? []).length;
}

/** Findings for one page. `knownSlugs` are the concepts links may point at. */
export function checkPage(
  markdown: string,
  passages: readonly Passage[],
  knownSlugs: ReadonlySet<string>,
  options: Partial<PageCheckOptions> = {},
): PageFinding[] {
  const settings = { ...pageCheckDefaults, ...options };
  const findings: PageFinding[] = [];
  const add = (code: PageFindingCode, message: string, line?: number) =>
    findings.push({
      code,
      severity: settings.warnOnly.includes(code) ? 'warning' : 'error',
      message,
      ...(line !== undefined ? { line } : {}),
    });
  const byCitation = new Map(passages.map((passage) => [passage.citation, passage]));
  const lines = markdown.split('\n');
  let section = '';
  let hasTitle = false;
  let words = 0;
  const cited: number[] = [];
  let inCode = false;
  lines.forEach((line, index) => {
    const number = index + 1;
    if (/^\s{0,3}(```|~~~)/.test(line)) inCode = !inCode;
    if (inCode || line.trim() === '' || /^\s{0,3}(```|~~~)/.test(line)) return;
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      if ((heading[1] as string).length === 1 && (heading[2] as string).trim()) hasTitle = true;
      section = (heading[2] as string).trim();
      return;
    }
    const structural = structuralHeadings.includes(section);
    // Links of the Sources section point at sources, not concepts.
    for (const match of section === sourcesHeading ? [] : line.matchAll(linkPattern)) {
      const target = match[1] as string;
      const slug = /^([a-z0-9-]+)\.md$/.exec(target)?.[1];
      if (slug !== undefined && !knownSlugs.has(slug))
        add('K107', `link to concept ${JSON.stringify(slug)}, which the concept map does not have`, number);
    }
    if (structural) return;
    words += proseWords(line);
    const citations = [...line.matchAll(citationPattern)].map((match) => Number(match[1]));
    if (citations.length === 0 && /[\p{L}\p{N}]/u.test(line))
      add('K102', `paragraph without a citation: ${JSON.stringify(line.slice(0, 80))}`, number);
    for (const citation of citations) {
      if (!byCitation.has(citation)) add('K101', `citation [${citation}] has no loaded passage`, number);
      else cited.push(citation);
    }
  });
  if (!hasTitle) add('K108', 'the page needs a "# title" line');
  if (words < settings.minWords) add('K103', `${words} words, fewer than min_words ${settings.minWords}`);
  if (words > settings.maxWords) add('K104', `${words} words, more than max_words ${settings.maxWords}`);
  const perSource = new Map<string, number>();
  for (const citation of cited) {
    const source = (byCitation.get(citation) as Passage).source_id;
    perSource.set(source, (perSource.get(source) ?? 0) + 1);
  }
  if (perSource.size < settings.minSources)
    add(
      'K105',
      `${perSource.size} distinct source${perSource.size === 1 ? '' : 's'} cited, fewer than min_sources ${settings.minSources}`,
    );
  if (cited.length > 0 && perSource.size > 1) {
    const [top, count] = [...perSource.entries()].sort((a, b) => b[1] - a[1])[0] as [string, number];
    const share = count / cited.length;
    if (share > settings.maxSourceShare)
      add(
        'K106',
        `${Math.round(share * 100)}% of the citations point at ${top}, over max_source_share ${settings.maxSourceShare}`,
      );
  }
  return findings;
}

export function hasErrors(findings: readonly PageFinding[]): boolean {
  return findings.some((finding) => finding.severity === 'error');
}
