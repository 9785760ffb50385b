import { Type } from 'typebox';
import { convertDocument } from '../../documents/convert-document.js';
import { type ConvertedDocument, DocumentError } from '../../documents/document-error.js';
import { isoCodeOf, pageCopy, type SearchLanguage, toSearchLanguage } from '../../search-index/language.js';
import { loadLanguageDetector } from '../../search-index/language-detection.js';
import { defineAdapter } from '../adapter.js';

export const documentConverter = defineAdapter({
  type: 'document_converter',
  group: 'fileshare',
  summary: 'Office documents and PDFs to markdown.',
  description:
    'Reads the stored object named by `storage_key` (pdf_fetcher, fileshare_fetcher) or `object_key` (replay), ' +
    'recognises its type from its bytes (PDF, DOCX, PPTX, XLSX, HTML, and markdown or plain text by content type) and converts it ' +
    'to `{markdown, front_matter}` like html_to_markdown. PDF headings are rebuilt from font sizes. Work per document ' +
    'is bounded by `max_pages`, `max_unzipped_mb` and `timeout_seconds`; encrypted, damaged, unsupported or text-less ' +
    'documents fail with a message saying why. Sets `metadata.document` (source_key = the url, else the storage key; ' +
    'storage_key = the stored original, which citations link to when the url is not http(s)).',
  config: Type.Object(
    {
      max_document_size_mb: Type.Number({
        exclusiveMinimum: 0,
        maximum: 1024,
        default: 100,
        description: 'larger stored objects fail without being read',
      }),
      max_pages: Type.Integer({
        minimum: 1,
        maximum: 100_000,
        default: 2000,
        description:
          'PDF pages (PPTX slides, XLSX sheets) converted at most; later ones are left out (front_matter.pages_converted)',
      }),
      max_unzipped_mb: Type.Number({
        exclusiveMinimum: 0,
        maximum: 4096,
        default: 200,
        description: 'decompressed size a DOCX, PPTX or XLSX may reach; more fails as a possible zip bomb',
      }),
      timeout_seconds: Type.Number({
        exclusiveMinimum: 0,
        maximum: 3600,
        default: 120,
        description: 'time budget of one conversion',
      }),
      language: Type.Optional(
        Type.String({
          minLength: 2,
          description:
            'ISO code or search language name (`en`, `nb`, `english`) of documents whose text is too short or mixed to detect confidently',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({
    storage_key: Type.Optional(Type.String({ description: 'key of the stored document' })),
    object_key: Type.Optional(Type.String({ description: 'key of a replayed stored object' })),
    url: Type.Optional(Type.String()),
    content_type: Type.Optional(Type.String()),
    title: Type.Optional(
      Type.String({
        description:
          'the title the source gives it (a wiki attachment: page title and file name); wins over the title inside',
      }),
    ),
  }),
  output: Type.Object({
    markdown: Type.String(),
    front_matter: Type.Object({
      title: Type.String(),
      url: Type.String(),
      language: Type.String({ description: 'ISO 639-1 code, empty when unknown' }),
      description: Type.String(),
      document_type: Type.String({ description: 'pdf, docx, pptx, xlsx, html, markdown or text' }),
      page_count: Type.Optional(Type.Integer({ description: 'PDF pages, PPTX slides or XLSX sheets' })),
      pages_converted: Type.Optional(Type.Integer({ description: 'when max_pages cut the document short' })),
    }),
  }),
  create: (config, resources) => {
    const configured = config.language === undefined ? undefined : toSearchLanguage(config.language);
    if (config.language !== undefined && configured === undefined)
      throw new Error(
        `language ${JSON.stringify(config.language)} is not a known ISO code or search language`,
      );
    const maxBytes = Math.floor(config.max_document_size_mb * 1024 * 1024);
    return async (payload, context) => {
      const key = typeof payload.storage_key === 'string' ? payload.storage_key : payload.object_key;
      if (typeof key !== 'string' || key === '')
        throw new Error(
          'input needs `storage_key` (pdf_fetcher, fileshare_fetcher) or `object_key` (replay)',
        );
      const info = await resources.storage.stat(key);
      if (!info) throw new DocumentError(`stored object ${key} does not exist`);
      if (info.size > maxBytes)
        throw new DocumentError(
          `document is ${info.size} bytes, over max_document_size_mb (${config.max_document_size_mb})`,
        );
      const url = stringOr(payload.url, stringOr(info.metadata.url, ''));
      const contentType = stringOr(payload.content_type, info.content_type);
      const converted = await convertDocument(await resources.storage.get(key), {
        contentType,
        url,
        limits: {
          maxPages: config.max_pages,
          maxUnzippedBytes: Math.floor(config.max_unzipped_mb * 1024 * 1024),
          timeoutMs: Math.round(config.timeout_seconds * 1000),
          signal: context.signal,
        },
      });
      if (converted.markdown.trim() === '')
        throw new DocumentError(
          converted.type === 'pdf'
            ? 'PDF has no text layer (scanned pages?); OCR is not supported'
            : `${converted.type} document has no text`,
        );
      const language = await chooseLanguage(converted, configured, url || key);
      const title = stringOr(payload.title, converted.title);
      const frontMatter = {
        title,
        url,
        language: isoCodeOf(language) ?? '',
        description: converted.description,
        document_type: converted.type,
        ...(converted.pageCount !== undefined ? { page_count: converted.pageCount } : {}),
        ...(converted.pagesConverted !== undefined ? { pages_converted: converted.pagesConverted } : {}),
      };
      return [
        {
          payload: { markdown: converted.markdown, front_matter: frontMatter },
          // storage_key: the stored original, which a citation of a file with no http URL opens.
          metadata: { document: { source_key: url || key, url, title, language, storage_key: key } },
        },
      ];
    };
  },
});

/**
 * The text decides: authoring tools stamp their own locale as the document language (a
 * Norwegian report written on an English LibreOffice declares en-US), so the configured and
 * then the declared language are only used when detection is not confident. Without either,
 * a language folder in the document's address (`manuals/da/guide.pdf`) declares it, as
 * html_to_markdown does for pages and as search reads copies of one document (pageCopy).
 */
async function chooseLanguage(
  document: ConvertedDocument,
  configured: SearchLanguage | undefined,
  address: string,
): Promise<SearchLanguage> {
  const fallback =
    configured ??
    toSearchLanguage(document.declaredLanguage.split(/[-_]/)[0]) ??
    pageCopy(address)?.language ??
    'simple';
  return (await loadLanguageDetector()).document(document.markdown, fallback);
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}
