/**
 * DOCX to markdown: mammoth maps Word styles to semantic HTML (headings, lists, tables, bold,
 * links), and the project's HTML converter writes the markdown, so web pages and Word files
 * come out in one markdown dialect. Title, language and description come from the document
 * properties (docProps/core.xml). Before mammoth sees the file, every entry is inflated once
 * under the `maxUnzippedBytes` cap (zip.ts), which bounds what mammoth can decompress.
 */
import { htmlToMarkdown } from '../markdown/html-to-markdown.js';
import {
  type ConversionLimits,
  type ConvertedDocument,
  DocumentError,
  withinBudget,
} from './document-error.js';
import { coreProperties } from './office-xml.js';
import { readZip } from './zip.js';

export async function docxToMarkdown(data: Buffer, limits: ConversionLimits): Promise<ConvertedDocument> {
  // Images are not converted (see below), so mammoth never inflates word/media/: the budget
  // covers every part it reads.
  const files = readZip(data, limits.maxUnzippedBytes, (name) => !name.startsWith('word/media/'));
  if (!files.has('word/document.xml'))
    throw new DocumentError('ZIP archive is not a Word document (no word/document.xml)');
  const properties = coreProperties(files.get('docProps/core.xml')?.toString('utf8') ?? '');
  // Loaded on first use, like pdf.js.
  const { default: mammoth } = await import('mammoth');
  // Images keep only their alt text: mammoth's default inlines them as base64 data URIs, which
  // would put megabytes of noise into the markdown and the index, and would read their bytes.
  const altTextOnly = mammoth.images.imgElement(async () => ({ src: '' }));
  const { value: html } = await withinBudget('DOCX conversion', limits, () =>
    mammoth.convertToHtml({ buffer: data }, { convertImage: altTextOnly }).catch((error: unknown) => {
      throw new DocumentError(`Word document could not be read: ${(error as Error).message}`);
    }),
  );
  const page = htmlToMarkdown(`<!DOCTYPE html><html><head></head><body><main>${html}</main></body></html>`);
  const firstHeading = /^#{1,6} (.+)$/m.exec(page.markdown)?.[1] ?? '';
  return {
    markdown: page.markdown,
    title: properties.title || firstHeading,
    declaredLanguage: properties.language,
    description: properties.description,
  };
}
