import { describe, expect, it } from 'vitest';
import { htmlToMarkdown } from './html-to-markdown.js';
import { linkHeaderAlternates, maxAlternateLinks, maxAlternates, pageAlternates } from './page-alternates.js';

const head = (links: string) =>
  `<!doctype html><html lang="en"><head><title>A</title>${links}</head><body><main><p>Text.</p></main></body></html>`;

describe('declared translations (hreflang)', () => {
  it('keeps each code with its href resolved against the page URL, on the same site, without a fragment', () => {
    const converted = htmlToMarkdown(
      head(
        `<link rel="alternate" hreflang="nb" href="a.html?lang=nb#top">
         <link rel="Alternate" hreflang="sv-SE" href="https://sv.example.org/a">
         <link rel="alternate" hreflang="x-default" href="/a.html">
         <link rel="alternate" hreflang="da" href="https://elsewhere.net/a.html">
         <link rel="alternate" hreflang="fi" href="javascript:alert(1)">
         <link rel="alternate" hreflang="nb" href="/second-nb.html">
         <link rel="alternate" type="application/rss+xml" href="/feed.xml">
         <link rel="alternate" hreflang="&quot;&gt;" href="/bad-code.html">`,
      ),
      { url: 'https://www.example.org/help/a.html' },
    );
    expect(converted.alternates).toEqual({
      nb: 'https://www.example.org/help/a.html?lang=nb',
      'sv-se': 'https://sv.example.org/a',
      'x-default': 'https://www.example.org/a.html',
    });
  });

  it('keeps none without a web page URL, or when no link declares one', () => {
    const links = '<link rel="alternate" hreflang="nb" href="https://example.org/nb/a.html">';
    expect(htmlToMarkdown(head(links)).alternates).toBeUndefined();
    expect(htmlToMarkdown(head(links), { url: 'file:///docs/a.html' }).alternates).toBeUndefined();
    expect(htmlToMarkdown(head(''), { url: 'https://example.org/a.html' }).alternates).toBeUndefined();
  });

  it('takes a canonical_hosts host as the same site', () => {
    const links = [{ hreflang: 'nb', href: 'https://docs.upstream.net/nb/a.html' }];
    expect(pageAlternates(links, 'https://mirror.org/a.html')).toBeUndefined();
    expect(pageAlternates(links, 'https://mirror.org/a.html', ['docs.upstream.net'])).toEqual({
      nb: 'https://docs.upstream.net/nb/a.html',
    });
  });

  it('reads the HTTP Link header after the head, by RFC 8288 entries', () => {
    const header =
      '<https://example.org/a.html?lang=nb>; rel="alternate"; hreflang="nb", </style.css>; rel=preload; as=style, ' +
      '</da/a.html>; hreflang=da; rel="alternate nofollow", <https://example.org/x.html>; rel="alternate"; hreflang="nb", ' +
      '<https://example.org/a.html; rel=alternate; hreflang=sv';
    expect(linkHeaderAlternates(header)).toEqual([
      { hreflang: 'nb', href: 'https://example.org/a.html?lang=nb' },
      { hreflang: 'da', href: '/da/a.html' },
      { hreflang: 'nb', href: 'https://example.org/x.html' },
    ]);
    const converted = htmlToMarkdown(
      head(
        '<link rel="alternate" hreflang="en" href="/a.html"><link rel="alternate" hreflang="da" href="/dansk/a.html">',
      ),
      { url: 'https://example.org/a.html', linkHeader: header },
    );
    // The head's `da` wins over the header's; the header adds `nb`.
    expect(converted.alternates).toEqual({
      en: 'https://example.org/a.html',
      da: 'https://example.org/dansk/a.html',
      nb: 'https://example.org/a.html?lang=nb',
    });
    expect(linkHeaderAlternates(`${'<'.repeat(200_000)}>; rel=alternate; hreflang=nb`)).toEqual([]);
  });

  it('bounds a hostile head: of twenty thousand links, 50 codes are kept and only the first 500 links read', () => {
    const link = (code: string, host: string) =>
      `<link rel="alternate" hreflang="${code}" href="https://${host}/${'p'.repeat(200)}/${code}">`;
    const codes = Array.from(
      { length: 20_000 },
      (_, index) => `a${String.fromCharCode(97 + (index % 26))}-x${index}`,
    );
    const converted = htmlToMarkdown(head(codes.map((code) => link(code, 'example.org')).join('')), {
      url: 'https://example.org/a.html',
    });
    expect(Object.keys(converted.alternates ?? {})).toEqual(codes.slice(0, maxAlternates));
    expect(converted.markdown).toBe('Text.\n');
    // 500 links to another site first: the valid ones after them are never read.
    const late = [
      ...codes.slice(0, maxAlternateLinks).map((code) => link(code, 'other.net')),
      link('nb', 'example.org'),
    ];
    expect(
      htmlToMarkdown(head(late.join('')), { url: 'https://example.org/a.html' }).alternates,
    ).toBeUndefined();
    expect(
      htmlToMarkdown(head(late.slice(1).join('')), { url: 'https://example.org/a.html' }).alternates,
    ).toEqual({
      nb: `https://example.org/${'p'.repeat(200)}/nb`,
    });
  });
});
