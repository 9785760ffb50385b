/**
 * Picks a converter from the bytes themselves (magic numbers), not from a file name or a
 * server's Content-Type, which are often wrong: `%PDF-` near the start is a PDF, a ZIP with
 * word/document.xml a Word document (ppt/, xl/ parts: PowerPoint, Excel), markup an HTML page, and text declared as markdown or
 * plain text passes through. Anything else is refused with the type it looks like.
 */
import { assertTextual, HtmlInputError } from '../markdown/html-input-guards.js';
import { htmlToMarkdown } from '../markdown/html-to-markdown.js';
import { type ConversionLimits, type ConvertedDocument, DocumentError } from './document-error.js';
import { docxToMarkdown } from './docx-to-markdown.js';
import { pdfToMarkdown } from './pdf-to-markdown.js';
import { pptxToMarkdown } from './pptx-to-markdown.js';
import { xlsxToMarkdown } from './xlsx-to-markdown.js';
import { isZip, zipEntries } from './zip.js';

export type DocumentType = 'pdf' | 'docx' | 'pptx' | 'xlsx' | 'html' | 'markdown' | 'text';

export function detectDocumentType(data: Buffer, contentType = ''): DocumentType {
  // PDF readers accept up to 1 KB of junk before the header; so do we.
  if (data.subarray(0, 1024).includes('%PDF-')) return 'pdf';
  if (isZip(data)) {
    const names = new Set(zipEntries(data).map((entry) => entry.name));
    if (names.has('word/document.xml')) return 'docx';
    if (names.has('ppt/presentation.xml')) return 'pptx';
    if (names.has('xl/workbook.xml')) return 'xlsx';
    throw new DocumentError('ZIP archive is not an Office document (no Word, PowerPoint or Excel part)');
  }
  if (startsWithBytes(data, [0xd0, 0xcf, 0x11, 0xe0]))
    throw new DocumentError(
      'legacy Office binary files (.doc, .xls, .ppt) are not supported; save as .docx, .pptx or .xlsx',
    );
  const head = data
    .subarray(0, 2048)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase();
  const mediaType = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (/^<(!doctype html|html[\s>]|head[\s>]|body[\s>])/.test(head) || mediaType === 'text/html')
    return 'html';
  if (mediaType === 'text/markdown' || mediaType === 'text/x-markdown') return 'markdown';
  if (mediaType === 'text/plain') return 'text';
  throw new DocumentError(
    `unsupported document type${mediaType ? ` (${mediaType})` : ''}: not a PDF, DOCX, PPTX, XLSX or HTML file`,
  );
}

export async function convertDocument(
  data: Buffer,
  options: { contentType?: string; url?: string; limits: ConversionLimits },
): Promise<ConvertedDocument & { type: DocumentType }> {
  const type = detectDocumentType(data, options.contentType);
  switch (type) {
    case 'pdf':
      return { type, ...(await pdfToMarkdown(data, options.limits)) };
    case 'docx':
      return { type, ...(await docxToMarkdown(data, options.limits)) };
    case 'pptx':
      return { type, ...pptxToMarkdown(data, options.limits) };
    case 'xlsx':
      return { type, ...xlsxToMarkdown(data, options.limits) };
    case 'html': {
      const page = textual(() => htmlToMarkdown(data.toString('utf8'), { url: options.url }));
      return {
        type,
        markdown: page.markdown,
        title: page.frontMatter.title,
        declaredLanguage: page.frontMatter.language,
        description: page.frontMatter.description,
      };
    }
    case 'markdown':
    case 'text': {
      const text = textual(() => {
        const decoded = data.toString('utf8').replace(/^\uFEFF/, '');
        assertTextual(decoded, 'document');
        return decoded;
      });
      const firstHeading = /^#{1,6} (.+)$/m.exec(text)?.[1] ?? '';
      return { type, markdown: text, title: firstHeading.trim(), declaredLanguage: '', description: '' };
    }
  }
}

/** The HTML converter's "this is binary" refusal, as a DocumentError. */
function textual<T>(convert: () => T): T {
  try {
    return convert();
  } catch (error) {
    if (error instanceof HtmlInputError) throw new DocumentError(error.message);
    throw error;
  }
}

function startsWithBytes(data: Buffer, bytes: number[]): boolean {
  return bytes.every((byte, index) => data[index] === byte);
}
