/**
 * The coded routes of the test site (test/helpers/test-site.ts), everything a crawler must cope
 * with: robots.txt and sitemaps (indexes with nested and gzipped sitemaps, a malformed one, XML
 * bombs, a loop, a huge one), and pages (404/410/403/500, redirect chains and loops, a
 * windows-1252 page, an oversized page, binary served as HTML, a slow answer, PDFs).
 */
import { readFile } from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const siteRoot = fileURLToPath(new URL('../fixtures/site/', import.meta.url));

/** Bytes of the oversized page; tests configure a smaller max body. */
export const LARGE_PAGE_BYTES = 300 * 1024;

/** The smallest well-formed one-page PDF, so PDF tests do not depend on other fixtures. */
export const SAMPLE_PDF = Buffer.from(
  [
    '%PDF-1.4',
    '1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj',
    '2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj',
    '3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >> endobj',
    '4 0 obj << /Length 44 >> stream',
    'BT /F1 12 Tf 20 100 Td (Quick reference) Tj ET',
    'endstream endobj',
    '5 0 obj << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> endobj',
    'trailer << /Root 1 0 R >>',
    '%%EOF',
    '',
  ].join('\n'),
  'latin1',
);

export type Route = (response: http.ServerResponse, pathname: string) => void | Promise<void>;

const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>\n${body}\n`;
const urlset = (urls: string[]) =>
  xml(
    `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls
      .map((url) => `  <url><loc>${url}</loc><lastmod>2025-01-15</lastmod></url>`)
      .join('\n')}\n</urlset>`,
  );
const sitemapIndex = (urls: string[]) =>
  xml(
    `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls
      .map((url) => `  <sitemap><loc>${url}</loc></sitemap>`)
      .join('\n')}\n</sitemapindex>`,
  );

function latin1Page(): Buffer {
  const html = `<!DOCTYPE html><html lang="en"><head><title>Caf\u00e9 menu \u2013 legacy page</title></head>
<body><main><h1>Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e</h1>
<p>\u201cSm\u00f8rbr\u00f8d\u201d costs \u20ac12 \u2014 na\u00efve pricing, \u00a9 1999.</p></main></body></html>`;
  // windows-1252 maps \u20ac \u201c \u201d \u2013 \u2014 to single bytes; the rest is Latin-1.
  const table: Record<string, number> = {
    '\u20ac': 0x80,
    '\u2013': 0x96,
    '\u2014': 0x97,
    '\u201c': 0x93,
    '\u201d': 0x94,
  };
  return Buffer.from([...html].map((character) => table[character] ?? character.charCodeAt(0)));
}

function largePage(): string {
  const paragraph = '<p>This paragraph is repeated to make a page larger than the configured limit.</p>\n';
  return `<!DOCTYPE html><html><head><title>Large</title></head><body>${paragraph.repeat(
    Math.ceil(LARGE_PAGE_BYTES / paragraph.length),
  )}</body></html>`;
}

function binaryBody(): Buffer {
  const bytes = Buffer.alloc(4096);
  for (let index = 0; index < bytes.length; index++) bytes[index] = (index * 31 + 7) % 256;
  return bytes;
}

const billionLaughs = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>&lol9;</loc></url></urlset>
`;

const externalEntity = `<?xml version="1.0"?>
<!DOCTYPE urlset [ <!ENTITY secret SYSTEM "file:///etc/passwd"> ]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>&secret;</loc></url></urlset>
`;

/** robots.txt and the sitemaps; `baseUrl` is asked at request time (the port is known after listen). */
export function sitemapRoutes(baseUrl: () => string): Record<string, Route> {
  return {
    '/robots.txt': (response) =>
      send(
        response,
        200,
        'text/plain',
        `# Test site\nUser-agent: *\nDisallow: /private/\nAllow: /private/public-note.html\n\nUser-agent: BadBot\nDisallow: /\n\nSitemap: ${baseUrl()}/sitemap_index.xml\n`,
      ),
    '/sitemap_index.xml': (response) =>
      send(
        response,
        200,
        'application/xml',
        sitemapIndex([
          `${baseUrl()}/sitemaps/pages.xml`,
          `${baseUrl()}/sitemaps/nested-index.xml`,
          `${baseUrl()}/sitemaps/more.xml.gz`,
          `${baseUrl()}/sitemaps/encoded.xml`,
        ]),
      ),
    '/sitemaps/pages.xml': (response) =>
      send(
        response,
        200,
        'application/xml',
        urlset([
          `${baseUrl()}/articles/getting-started.html`,
          `${baseUrl()}/articles/pipelines.html`,
          `${baseUrl()}/articles/norsk-veiledning.html`,
          `${baseUrl()}/missing-page`,
          `${baseUrl()}/private/secret.html`,
          `${baseUrl()}/redirect/start`,
        ]),
      ),
    '/sitemaps/nested-index.xml': (response) =>
      send(response, 200, 'application/xml', sitemapIndex([`${baseUrl()}/sitemaps/docs.xml`])),
    '/sitemaps/docs.xml': (response) =>
      send(
        response,
        200,
        'application/xml',
        urlset([`${baseUrl()}/articles/pdf-links.html`, `${baseUrl()}/js/rendered.html`]),
      ),
    // A gzipped file (the .gz body itself), served without Content-Encoding as sites do.
    '/sitemaps/more.xml.gz': (response) =>
      send(
        response,
        200,
        'application/x-gzip',
        gzipSync(urlset([`${baseUrl()}/legacy/latin1.html`, `${baseUrl()}/throttled/page`])),
      ),
    // Compressed in transit: Content-Encoding gzip.
    '/sitemaps/encoded.xml': (response) => {
      response.writeHead(200, { 'content-type': 'application/xml', 'content-encoding': 'gzip' });
      response.end(gzipSync(urlset([`${baseUrl()}/articles/pipelines.html`])));
    },
    '/sitemaps/broken.xml': (response) =>
      send(response, 200, 'application/xml', xml('<urlset><url><loc>http://x/a</loc></url><url><loc>')),
    '/sitemaps/not-a-sitemap.xml': (response) =>
      send(response, 200, 'application/xml', xml('<rss version="2.0"><channel></channel></rss>')),
    '/sitemaps/bomb.xml': (response) => send(response, 200, 'application/xml', billionLaughs),
    '/sitemaps/external-entity.xml': (response) => send(response, 200, 'application/xml', externalEntity),
    '/sitemaps/huge.xml': (response) =>
      send(
        response,
        200,
        'application/xml',
        urlset(Array.from({ length: 20_000 }, (_, index) => `${baseUrl()}/generated/page-${index}.html`)),
      ),
    '/sitemaps/gzip-bomb.xml.gz': (response) =>
      send(response, 200, 'application/x-gzip', gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x20))),
    '/sitemaps/loop-a.xml': (response) =>
      send(response, 200, 'application/xml', sitemapIndex([`${baseUrl()}/sitemaps/loop-b.xml`])),
    '/sitemaps/loop-b.xml': (response) =>
      send(response, 200, 'application/xml', sitemapIndex([`${baseUrl()}/sitemaps/loop-a.xml`])),
  };
}

/** The pages: errors, redirects, legacy encodings, oversized and binary bodies, a slow answer, PDFs. */
export function pageRoutes(pdfFiles: readonly string[]): Record<string, Route> {
  return {
    '/missing-page': (response) => send(response, 404, 'text/html', '<h1>Not found</h1>'),
    '/gone': (response) => send(response, 410, 'text/html', '<h1>Gone</h1>'),
    '/forbidden': (response) => send(response, 403, 'text/html', '<h1>Forbidden</h1>'),
    '/server-error': (response) => send(response, 500, 'text/html', '<h1>Internal error</h1>'),
    '/redirect/start': (response) => redirect(response, 301, '/redirect/middle'),
    '/redirect/middle': (response) => redirect(response, 302, '/articles/getting-started.html'),
    '/redirect/loop': (response) => redirect(response, 302, '/redirect/loop'),
    '/redirect/to-private': (response) => redirect(response, 302, '/private/secret.html'),
    '/legacy/latin1.html': (response) => send(response, 200, 'text/html; charset=windows-1252', latin1Page()),
    '/legacy/meta-charset.html': (response) =>
      send(
        response,
        200,
        'text/html',
        Buffer.concat([
          Buffer.from('<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'),
          Buffer.from('</head><body><p>Bl\u00e5b\u00e6rsyltet\u00f8y</p></body></html>', 'latin1'),
        ]),
      ),
    '/large.html': (response) => send(response, 200, 'text/html; charset=utf-8', largePage()),
    // Chunked, so no Content-Length warns the client in advance.
    '/large-chunked.html': (response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(largePage());
    },
    '/binary.html': (response) => send(response, 200, 'text/html', binaryBody()),
    '/slow': async (response) => {
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      if (!response.destroyed) send(response, 200, 'text/html', '<p>finally</p>');
    },
    '/api/article.json': (response) =>
      send(
        response,
        200,
        'application/json',
        JSON.stringify({
          title: 'Rendered in the browser',
          paragraphs: [
            'This article is assembled by JavaScript after the page loads.',
            'A plain HTTP fetch only sees a loading spinner; a real browser sees this text.',
          ],
        }),
      ),
    '/downloads/sample.pdf': (response) => send(response, 200, 'application/pdf', SAMPLE_PDF),
    '/documents/annual-report': (response) => send(response, 200, 'application/pdf', SAMPLE_PDF),
    '/downloads/fake.pdf': (response) => send(response, 200, 'application/pdf', '<html>not a PDF</html>'),
    '/downloads/huge.pdf': (response) =>
      send(
        response,
        200,
        'application/pdf',
        Buffer.concat([SAMPLE_PDF, Buffer.alloc(2 * 1024 * 1024, 0x20)]),
      ),
    '/articles/pdf-links.html': async (response) => {
      const page = await readFile(path.join(siteRoot, 'articles/pdf-links.html'), 'utf8');
      const items = pdfFiles.map((name) => `<li><a href="/files/${name}">${name}</a></li>`).join('');
      send(
        response,
        200,
        'text/html; charset=utf-8',
        page.replace('<ul id="files"></ul>', `<ul id="files">${items}</ul>`),
      );
    },
  };
}

export function send(
  response: http.ServerResponse,
  status: number,
  contentType: string,
  body: string | Buffer,
): void {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  response.writeHead(status, { 'content-type': contentType, 'content-length': bytes.length });
  response.end(bytes);
}

function redirect(response: http.ServerResponse, status: number, location: string): void {
  response.writeHead(status, { location, 'content-type': 'text/plain' });
  response.end(`see ${location}`);
}
