import { Type } from 'typebox';
import { htmlToMarkdown as convert } from '../../markdown/html-to-markdown.js';
import { isoCodeOf, pageCopy, toSearchLanguage } from '../../search-index/language.js';
import { loadLanguageDetector } from '../../search-index/language-detection.js';
import { defineAdapter } from '../adapter.js';
import type { DocumentMetadata } from './document.js';

export const htmlToMarkdown = defineAdapter({
  type: 'html_to_markdown',
  group: 'markdown',
  summary: 'Convert HTML to markdown, keeping the main content and dropping navigation and boilerplate.',
  description:
    'Main content is `<main>`, `<article>` or `role=main`, else the block holding most of the non-link text; ' +
    'nav, header, footer, aside, scripts, styles, forms and cookie banners are dropped. Markdown keeps headings, lists, ' +
    'links (absolute), fenced code blocks with their language, GFM tables and quotes. `front_matter` has title ' +
    '(og:title, <title>, first heading), url (the input URL, or its canonical or og:url when http(s) on the same host or a `canonical_hosts` one), language (ISO code: detected from the ' +
    'text when confident, else the configured language, else <html lang>) and description. Sets `metadata.document` ({source_key, url, title, language, storage_key = the stored object read, and alternates = the translations the head declares with <link rel=alternate hreflang>, then the web_scraper `headers.link` (HTTP Link header): code -> absolute URL, same site, at most 50}) for later stages. ' +
    'Input larger than `max_html_mb` or binary fails. Accepts the storage_retriever payload or the web_scraper one.',
  config: Type.Object(
    {
      max_html_mb: Type.Number({
        exclusiveMinimum: 0,
        maximum: 100,
        default: 10,
        description: 'larger input fails',
      }),
      canonical_hosts: Type.Array(Type.String({ minLength: 1 }), {
        default: [],
        maxItems: 100,
        description:
          "hosts whose <link rel=canonical> URLs are taken besides the fetched page's own host (a mirror naming its upstream); a file:// or other non-http canonical is never taken",
      }),
      language: Type.Optional(
        Type.String({
          description:
            'ISO code or search language of pages whose text is too short or mixed to detect confidently (before <html lang>)',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({
    html: Type.String(),
    source_key: Type.Optional(Type.String()),
    source_url: Type.Optional(Type.String()),
    url: Type.Optional(Type.String()),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  }),
  output: Type.Object({
    markdown: Type.String(),
    front_matter: Type.Object({
      title: Type.String(),
      url: Type.String(),
      language: Type.String({ description: 'ISO 639-1 code, empty when unknown' }),
      description: Type.String(),
    }),
  }),
  create: (config) => {
    if (config.language !== undefined && !toSearchLanguage(config.language)) {
      throw new Error(`html_to_markdown: language ${config.language} is not a supported language`);
    }
    const maxChars = Math.floor(config.max_html_mb * 1024 * 1024);
    return async (payload) => {
      const { html } = payload;
      if (typeof html !== 'string') throw new Error('input needs an `html` string');
      if (html.length > maxChars) {
        throw new Error(`html is ${html.length} characters, over max_html_mb (${config.max_html_mb} MB)`);
      }
      const url = [payload.source_url, payload.url].find(
        (value) => typeof value === 'string' && value !== '',
      ) as string | undefined;
      const linkHeader = (payload.headers as Record<string, unknown> | undefined)?.link;
      const converted = convert(html, {
        ...(url ? { url } : {}),
        ...(config.language ? { language: config.language } : {}),
        canonicalHosts: config.canonical_hosts,
        ...(typeof linkHeader === 'string' ? { linkHeader } : {}),
      });
      const declared = toSearchLanguage(converted.frontMatter.language);
      // Without <html lang>, a language folder in the URL (`/da/page.html`) declares the page's
      // language, as search reads copies of a page (language-preference.ts): a Danish page
      // is then Danish, not the first of ELD's Norwegian/Danish group, and a page too short to
      // detect keeps its folder's stemmer instead of `simple`.
      const folder = declared || !url ? undefined : pageCopy(url)?.language;
      const language = (await loadLanguageDetector()).document(
        converted.markdown,
        declared ?? folder ?? 'simple',
      );
      // The declared code stays when the text agrees with it (`nb` is not rewritten to `no`).
      const front =
        language === declared
          ? converted.frontMatter
          : { ...converted.frontMatter, language: isoCodeOf(language) ?? '' };
      // The URL the page was fetched from names it (as the fetchers know it), else the canonical one.
      const sourceKey =
        url || front.url || (typeof payload.source_key === 'string' ? payload.source_key : '');
      if (!sourceKey) throw new Error('input has neither a URL nor a source_key to name the document');
      const document: DocumentMetadata = {
        source_key: sourceKey,
        url: front.url || url || null,
        title: front.title || null,
        language,
        ...(converted.alternates ? { alternates: converted.alternates } : {}),
        // The stored page storage_retriever read: what a citation opens when the URL is not http(s).
        ...(typeof payload.source_key === 'string' && payload.source_key !== ''
          ? { storage_key: payload.source_key }
          : {}),
      };
      return [{ payload: { markdown: converted.markdown, front_matter: front }, metadata: { document } }];
    };
  },
});
