import { describe, expect, it } from 'vitest';
import { HtmlInputError } from './html-input-guards.js';
import { htmlToMarkdown } from './html-to-markdown.js';

const page = `<!doctype html><html lang="en-GB"><head>
<title>Ignored title</title><meta property="og:title" content="Vacuum basics">
<meta name="description" content="How VACUUM reclaims space.">
<link rel="canonical" href="https://docs.example.org/vacuum">
<style>body{color:red}</style><script>alert(1)</script></head>
<body><header class="site-header"><a href="/">Home</a></header>
<nav><ul><li><a href="/a">Nav link</a></li></ul></nav>
<div id="cookie-banner">We use cookies <button>OK</button></div>
<main><h1>Vacuum</h1><p>VACUUM reclaims <strong>storage</strong> occupied by <a href="tuples.html">dead tuples</a>.<br>Second line.</p>
<h2>Usage</h2><ul><li>Plain <em>vacuum</em><ul><li>nested item</li></ul></li><li>Full vacuum</li></ul>
<ol start="3"><li>three</li><li>four</li></ol>
<pre><code class="language-sql">VACUUM (VERBOSE) my_table;
-- a \`\`\` fence inside</code></pre>
<table><thead><tr><th>Option</th><th>Meaning</th></tr></thead><tbody><tr><td>FULL</td><td>rewrite | copy</td></tr><tr><td>ANALYZE</td></tr></tbody></table>
<blockquote><p>Quoted text</p></blockquote>
<form><input name="q"></form></main>
<aside>Related posts</aside><footer>Copyright</footer></body></html>`;

describe('htmlToMarkdown', () => {
  const { markdown, frontMatter } = htmlToMarkdown(page, { url: 'https://docs.example.org/vacuum?x=1' });

  it('keeps the main content and drops boilerplate', () => {
    for (const gone of ['Nav link', 'cookies', 'Related posts', 'Copyright', 'alert', 'color:red', 'Home'])
      expect(markdown).not.toContain(gone);
    expect(markdown.startsWith('# Vacuum\n\nVACUUM reclaims **storage** occupied by')).toBe(true);
  });

  it('writes headings, links, lists, code, tables and quotes', () => {
    expect(markdown).toContain('[dead tuples](https://docs.example.org/tuples.html).  \nSecond line.');
    expect(markdown).toContain('## Usage');
    expect(markdown).toContain('- Plain *vacuum*\n  - nested item\n- Full vacuum');
    expect(markdown).toContain('3. three\n4. four');
    expect(markdown).toContain('````sql\nVACUUM (VERBOSE) my_table;\n-- a ``` fence inside\n````');
    expect(markdown).toContain(
      '| Option | Meaning |\n| --- | --- |\n| FULL | rewrite \\| copy |\n| ANALYZE |  |',
    );
    expect(markdown).toContain('> Quoted text');
  });

  it('reads the front matter from the head', () => {
    expect(frontMatter).toEqual({
      title: 'Vacuum basics',
      url: 'https://docs.example.org/vacuum',
      language: 'en',
      description: 'How VACUUM reclaims space.',
    });
  });

  it('leaves the language empty when the page does not state it, and finds content by text density', () => {
    const norwegian = `<html><body><div class="menu"><a href="/">Hjem</a> <a href="/om">Om oss</a></div>
      <div class="wrapper"><div class="content"><p>Dette er en side om biler, og det er mye som skal sies om dem.</p>
      <p>Vi har ikke alt, men det som er her kan du lese.</p></div></div></body></html>`;
    const result = htmlToMarkdown(norwegian);
    // Detection is the adapter's (language-detection.ts); the converter reports what is declared.
    expect(result.frontMatter.language).toBe('');
    expect(result.frontMatter.title).toBe('');
    expect(result.markdown).not.toContain('Hjem');
    expect(result.markdown).toContain('Dette er en side om biler');
  });

  it('flattens deep nesting instead of overflowing the stack', () => {
    const deep = `<html><body><main>${'<div><span>'.repeat(2_400)}deep text${'</span></div>'.repeat(2_400)}</main></body></html>`;
    expect(htmlToMarkdown(deep).markdown.trim()).toBe('deep text');
  });

  it('refuses absurd nesting quickly instead of parsing it for minutes', () => {
    // The refusal alone is timed (about 10 ms quiet); the bound only tells it from parsing for
    // minutes, so a loaded machine does not fail it.
    const started = Date.now();
    expect(() => htmlToMarkdown('<div><span><b><i>'.repeat(100_000))).toThrow(
      /nests elements more than 5000 deep/,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    // Optional end tags, void elements and scripts do not count as nesting.
    const flat = `${'<p>text<br><img src="a.png">'.repeat(20_000)}<script>if (a<b) "<div>".repeat(9)</script><ul>${'<li>item'.repeat(20_000)}</ul>`;
    expect(htmlToMarkdown(flat).markdown).toContain('- item');
  });

  it('refuses binary input with a clear error', () => {
    const binary = String.fromCharCode(...Array.from({ length: 512 }, (_, index) => (index * 7) % 256));
    expect(() => htmlToMarkdown(binary)).toThrow(HtmlInputError);
    expect(() => htmlToMarkdown(`%PDF-1.7\n${'\u0000'.repeat(10)}`)).toThrow(/binary, not HTML/);
  });

  it('escapes paragraphs that would read as markdown blocks', () => {
    expect(htmlToMarkdown('<p># not a heading</p><p>1. not a list</p>').markdown).toBe(
      '\\# not a heading\n\n1\\. not a list\n',
    );
  });
});

describe('htmlToMarkdown: permalinks and canonical URLs', () => {
  it('drops heading permalinks of Sphinx, MkDocs and similar generators', () => {
    const sphinx = `<html><body><div role="main"><section id="install">
      <h1>Installing <code>pkg_tool</code><a class="headerlink" href="#install" title="Link to this heading">¶</a></h1>
      <p>Text with a <a href="#install">real link</a>.</p>
      <h2 id="s2">Second § <a class="headerlink" href="#s2">§</a></h2><p>More.</p></section></div></body></html>`;
    const { markdown } = htmlToMarkdown(sphinx, { url: 'http://127.0.0.1/install.html' });
    expect(markdown).toContain('# Installing `pkg_tool`\n');
    expect(markdown).toContain('## Second §\n');
    expect(markdown).not.toContain('¶');
    expect(markdown).toContain('[real link](#install)');
    const mkdocs = `<html><body><article><h2 id="usage">Usage<a class="headerlink" href="#usage" title="Permanent link">#</a></h2>
      <p>Run it.</p><h3 id="more">More <a href="#more" aria-label="Anchor">🔗</a></h3><p>x</p></article></body></html>`;
    const converted = htmlToMarkdown(mkdocs).markdown;
    expect(converted).toContain('## Usage\n');
    expect(converted).toContain('### More\n');
  });

  it('keeps DocBook headings (PostgreSQL docs) as they are', () => {
    const docbook = `<html><body><div class="sect1"><div class="titlepage"><h2 class="title" style="clear: both">
      <a id="ROUTINE-VACUUMING"></a>25.1. Routine Vacuuming</h2></div><p>PostgreSQL databases require maintenance.</p></div></body></html>`;
    expect(htmlToMarkdown(docbook).markdown).toContain('## 25.1. Routine Vacuuming\n');
  });

  it('names a packaged page by the URL it was fetched from, not its file:// canonical', () => {
    const packaged = `<html><head><link rel="canonical" href="file:///usr/share/doc/pkg/html/intro.html"></head>
      <body><main><p>See <a href="other.html">other</a>.</p></main></body></html>`;
    const page = htmlToMarkdown(packaged, { url: 'http://127.0.0.1:8080/intro.html' });
    expect(page.frontMatter.url).toBe('http://127.0.0.1:8080/intro.html');
    expect(page.markdown).toContain('[other](http://127.0.0.1:8080/other.html)');
    const mirrored = `<html><head><link rel="canonical" href="https://upstream.example/intro.html"></head><body><main><p>x</p></main></body></html>`;
    expect(htmlToMarkdown(mirrored, { url: 'http://127.0.0.1:8080/intro.html' }).frontMatter.url).toBe(
      'http://127.0.0.1:8080/intro.html',
    );
    expect(
      htmlToMarkdown(mirrored, {
        url: 'http://127.0.0.1:8080/intro.html',
        canonicalHosts: ['upstream.example'],
      }).frontMatter.url,
    ).toBe('https://upstream.example/intro.html');
  });
});
