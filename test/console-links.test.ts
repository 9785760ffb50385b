/**
 * The console makes links from data only through `httpUrl` (console/src/links.ts): a source URL
 * of `javascript:` was rendered as a link that ran as the console, with its API key.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { VNode } from 'preact';
import { describe, expect, it } from 'vitest';
import { httpUrl } from '../console/src/links.js';

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
  });
});

describe('every link the console makes from data goes through httpUrl', () => {
  // Allowed href expressions: in-console routes (`#/...` templates), the href ExternalLink
  // checked, the navigation's constant sections, and the search page's `#/storage` link.
  const allowed = new Set(['href', 'objectLink']);
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
