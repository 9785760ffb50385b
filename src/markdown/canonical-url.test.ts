import { describe, expect, it } from 'vitest';
import { chooseCanonicalUrl } from './canonical-url.js';

const fetched = 'http://127.0.0.1:8080/manual/intro.html';

describe('chooseCanonicalUrl', () => {
  it('keeps the fetched URL when the canonical is a file on the server (packaged docs)', () => {
    expect(chooseCanonicalUrl('file:///usr/share/doc/pkg/html/intro.html', fetched)).toBe(fetched);
  });

  it('keeps the fetched URL for a canonical on another host, unless the config allows that host', () => {
    expect(chooseCanonicalUrl('https://docs.example.org/intro.html', fetched)).toBe(fetched);
    expect(chooseCanonicalUrl('https://docs.example.org/intro.html', fetched, ['docs.example.org'])).toBe(
      'https://docs.example.org/intro.html',
    );
  });

  it('resolves a relative canonical against the fetched URL', () => {
    expect(chooseCanonicalUrl('../guide/intro.html', fetched)).toBe('http://127.0.0.1:8080/guide/intro.html');
  });

  it('takes http to https on the same site, www. or not', () => {
    expect(chooseCanonicalUrl('https://example.org/a', 'http://www.example.org/a?utm=1')).toBe(
      'https://example.org/a',
    );
  });

  it('falls back to the fetched URL for an unparseable canonical, and takes an http(s) one without a fetched URL', () => {
    expect(chooseCanonicalUrl('http://[bad', fetched)).toBe(fetched);
    expect(chooseCanonicalUrl('javascript:alert(1)', fetched)).toBe(fetched);
    expect(chooseCanonicalUrl('https://example.org/a', undefined)).toBe('https://example.org/a');
    expect(chooseCanonicalUrl('file:///etc/passwd', undefined)).toBeUndefined();
  });
});
