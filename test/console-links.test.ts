/**
 * The console makes links from data only through `httpUrl` (console/src/links.ts): a source URL
 * of `javascript:` was rendered as a link that ran as the console, with its API key.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { VNode } from 'preact';
import { describe, expect, it } from 'vitest';
import { httpUrl, linkUrl, sameOriginPath, sourceHref } from '../console/src/links.js';

describe('httpUrl', () => {
  it('keeps absolute http and https URLs, normalised', () => {
    expect(httpUrl('https://docs.example.com/a?b=1#c')).toBe('https://docs.example.com/a?b=1#c');
    expect(httpUrl('HTTP://Docs.Example.com')).toBe('http://docs.example.com/');
    expect(httpUrl('  https://example.com/x  ')).toBe('https://example.com/x');
  });

  it('refuses every other scheme, however it is spelled, and anything not absolute', () => {
    for (const value of [
      'javascript:alert(document.cookie)',
      'JaVaScRiPt:alert(1)',
      ' javascript:alert(1)',
      'java\tscript:alert(1)',
      'java\nscript:alert(1)',
      '\u0000javascript:alert(1)',
      'vbscript:msgbox(1)',
      'data:text/html,<script>alert(1)</script>',
      'file:///etc/passwd',
      'blob:https://example.com/1',
      '//attacker.example/x',
      '/api/v1/system/config',
      'not a url',
      '',
      null,
      undefined,
    ])
      expect(httpUrl(value), JSON.stringify(value)).toBeUndefined();
  });
});

describe('linkUrl and sameOriginPath (issue 31: citations of stored sources)', () => {
  it("keeps http(s) URLs and paths of the console's own origin", () => {
    expect(linkUrl('https://example.com/x')).toBe('https://example.com/x');
    expect(linkUrl('/api/v1/storage/objects/run/documents/a%20b.md')).toBe(
      '/api/v1/storage/objects/run/documents/a%20b.md',
    );
    expect(sameOriginPath('/api/v1/storage/objects/k?download=1#p')).toBe(
      '/api/v1/storage/objects/k?download=1#p',
    );
  });

  it('refuses paths that leave the origin however they are spelled, and other schemes', () => {
    for (const value of [
      '//attacker.example/x',
      '/\\attacker.example/x',
      '/\t/attacker.example/x',
      ' //attacker.example/x',
      '/.//attacker.example/x',
      '/a/..//attacker.example/x',
      'file:///work/docs/engine.md',
      'javascript:alert(1)',
      'docs/engine.md',
      '',
      null,
      undefined,
    ])
      expect(linkUrl(value), JSON.stringify(value)).toBeUndefined();
  });

  it('opens a stored source in the console, an http source at its origin, never file://', () => {
    const stored = {
      url: 'file:///work/docs/engine.md',
      object_key: 'run-1/documents/abc/engine.md',
      link: '/api/v1/storage/objects/run-1/documents/abc/engine.md',
    };
    expect(sourceHref(stored)).toBe(`#/storage/?object=${encodeURIComponent(stored.object_key)}`);
    expect(sourceHref({ ...stored, object_key: null })).toBe(stored.link);
    expect(sourceHref({ url: 'file:///work/docs/engine.md', object_key: null, link: null })).toBeUndefined();
    expect(sourceHref({ url: 'https://example.com/p', object_key: 'k', link: 'https://example.com/p' })).toBe(
      'https://example.com/p',
    );
  });
});

describe('ExternalLink', () => {
  it('is a link only for an http(s) URL, else the text alone', async () => {
    // Loaded by path: the service's tsconfig (NodeNext) types htm differently from the
    // console's (Bundler), so the console's components are type-checked by `tsc -p console`.
    const uiModule = '../console/src/ui.js';
    const { ExternalLink } = (await import(/* @vite-ignore */ uiModule)) as {
      ExternalLink: (props: { url: string | null | undefined; children: unknown }) => unknown;
    };
    const link = ExternalLink({ url: 'https://example.com/page', children: 'Page' }) as VNode<{
      href?: string;
    }>;
    expect(link.type).toBe('a');
    expect(link.props.href).toBe('https://example.com/page');
    const text = ExternalLink({ url: 'javascript:alert(1)', children: 'Page' }) as VNode<{ href?: string }>;
    expect(text.type).toBe('span');
    expect(text.props.href).toBeUndefined();
    const path = ExternalLink({ url: '/api/v1/storage/objects/k', children: 'Stored' }) as VNode<{
      href?: string;
    }>;
    expect(path.type).toBe('a');
    expect(path.props.href).toBe('/api/v1/storage/objects/k');
  });

  it('SourceLink links a stored source to the console view, in the same tab', async () => {
    const uiModule = '../console/src/ui.js';
    const { SourceLink } = (await import(/* @vite-ignore */ uiModule)) as {
      SourceLink: (props: {
        source: { url: string | null; object_key: string | null; link?: string | null };
        children: unknown;
      }) => unknown;
    };
    const stored = SourceLink({
      source: { url: 'file:///work/docs/engine.md', object_key: 'run/doc/engine.md' },
      children: 'engine',
    }) as VNode<{ href?: string; target?: string }>;
    expect(stored.type).toBe('a');
    expect(stored.props.href).toBe('#/storage/?object=run%2Fdoc%2Fengine.md');
    expect(stored.props.target).toBeUndefined();
  });
});

describe('every link the console makes from data goes through httpUrl', () => {
  // Allowed href expressions: in-console routes (`#/...` templates), the href ExternalLink and
  // SourceLink checked (linkUrl, sourceHref) and the navigation's constant sections.
  const allowed = new Set(['href']);
  const sources = (directory: string): string[] =>
    readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? sources(path.join(directory, entry.name))
        : entry.name.endsWith('.ts')
          ? [path.join(directory, entry.name)]
          : [],
    );

  it('finds no other href, src or action made from an expression in console/src', () => {
    const offenders: string[] = [];
    for (const file of sources(path.resolve('console/src'))) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/\b(?:href|src|action|formaction)=\$\{([^}]*)\}/g)) {
        const expression = (match[1] ?? '').trim();
        if (expression.startsWith('`#') || allowed.has(expression)) continue;
        offenders.push(`${path.relative('.', file)}: ${match[0]}`);
      }
      if (/\.href\s*=(?!=)/.test(text.replace(/link\.href = url;/, '')))
        offenders.push(`${path.relative('.', file)}: assigns .href`);
    }
    expect(offenders).toEqual([]);
  });
});
