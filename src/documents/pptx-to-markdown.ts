/**
 * PPTX to markdown: one `## title` section per slide in presentation order, body paragraphs
 * as text, bulleted ones as list items indented by their level. The title is the title
 * placeholder's text, else the first short text of the slide (tools that export plain text
 * boxes, LibreOffice among them, mark no placeholder). Speaker notes are left out.
 */
import { type ConversionLimits, type ConvertedDocument, DocumentError } from './document-error.js';
import { attribute, coreProperties, elements, relationshipTargets, textOf } from './office-xml.js';
import { readZip } from './zip.js';

export function pptxToMarkdown(data: Buffer, limits: ConversionLimits): ConvertedDocument {
  const files = readZip(
    data,
    limits.maxUnzippedBytes,
    (name) =>
      /^ppt\/slides\/slide\d+\.xml$/.test(name) ||
      name === 'ppt/presentation.xml' ||
      name === 'ppt/_rels/presentation.xml.rels' ||
      name === 'docProps/core.xml',
  );
  const presentation = files.get('ppt/presentation.xml')?.toString('utf8');
  if (presentation === undefined)
    throw new DocumentError('ZIP archive is not a PowerPoint file (no ppt/presentation.xml)');
  const slides = slideOrder(
    presentation,
    files.get('ppt/_rels/presentation.xml.rels')?.toString('utf8') ?? '',
    files,
  );
  const converted = slides.slice(0, limits.maxPages);
  const sections = converted.map((name, index) =>
    slideToMarkdown(files.get(name)?.toString('utf8') ?? '', index + 1),
  );
  const properties = coreProperties(files.get('docProps/core.xml')?.toString('utf8') ?? '');
  const markdown = sections.filter(Boolean).join('\n\n');
  return {
    markdown: markdown ? `${markdown}\n` : '',
    title: properties.title || (/^## (.+)$/m.exec(markdown)?.[1] ?? ''),
    declaredLanguage: properties.language,
    description: properties.description,
    pageCount: slides.length,
    ...(converted.length < slides.length ? { pagesConverted: converted.length } : {}),
  };
}

/** Slide part names in the order of `<p:sldIdLst>`, else by slide number. */
function slideOrder(presentation: string, rels: string, files: Map<string, Buffer>): string[] {
  const targets = relationshipTargets(rels, 'ppt');
  const ordered = elements(presentation, 'p:sldId')
    .map((element) => targets.get(attribute(element, 'p:sldId', 'r:id') ?? ''))
    .filter((name): name is string => name !== undefined && files.has(name));
  if (ordered.length > 0) return ordered;
  const number = (name: string) => Number(/(\d+)\.xml$/.exec(name)?.[1]);
  return [...files.keys()]
    .filter((name) => name.startsWith('ppt/slides/slide'))
    .sort((a, b) => number(a) - number(b));
}

function slideToMarkdown(xml: string, number: number): string {
  const shapes = elements(xml, 'p:sp')
    .map((shape) => ({
      placeholder: attribute(shape, 'p:ph', 'type'),
      paragraphs: elements(shape, 'a:p')
        .map((paragraph) => ({ paragraph, text: textOf(paragraph, 'a:t').replace(/\s+/g, ' ').trim() }))
        .filter((entry) => entry.text !== ''),
    }))
    .filter((shape) => shape.paragraphs.length > 0);
  let titleIndex = shapes.findIndex(
    (shape) => shape.placeholder === 'title' || shape.placeholder === 'ctrTitle',
  );
  const first = shapes[0];
  if (
    titleIndex < 0 &&
    first?.placeholder === undefined &&
    first?.paragraphs.length === 1 &&
    (first.paragraphs[0]?.text.length ?? 0) <= 120
  )
    titleIndex = 0;
  const title = shapes[titleIndex]?.paragraphs.map((entry) => entry.text).join(' ');
  const lines: string[] = [];
  shapes.forEach(({ placeholder, paragraphs }, index) => {
    if (index === titleIndex) return;
    for (const { paragraph, text } of paragraphs) {
      const level = Number(attribute(paragraph, 'a:pPr', 'lvl') ?? 0);
      const bulleted =
        /<a:bu(Char|AutoNum)\b/.test(paragraph) ||
        placeholder === 'body' ||
        (placeholder === undefined && level > 0);
      lines.push(bulleted ? `${'  '.repeat(Math.min(level, 8))}- ${text}` : text);
    }
  });
  // Paragraphs are separated by blank lines, list items kept together.
  const body = lines.reduce((text, line, index) => {
    if (index === 0) return line;
    const joined = line.trimStart().startsWith('- ') && (lines[index - 1] ?? '').trimStart().startsWith('- ');
    return `${text}${joined ? '\n' : '\n\n'}${line}`;
  }, '');
  return [`## ${title ?? `Slide ${number}`}`, body].filter(Boolean).join('\n\n');
}
