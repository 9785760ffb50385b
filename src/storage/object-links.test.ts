import { describe, expect, it } from 'vitest';
import { loadSettings } from '../settings.js';
import { publicBaseUrl, sourceLink, storedObjectPath } from './object-links.js';

describe('source links (issue 31)', () => {
  it('opens an http(s) source at its origin and anything else at its stored object', () => {
    expect(sourceLink('https://docs.example.org/a', 'run/web/a.html')).toBe('https://docs.example.org/a');
    expect(sourceLink('file:///srv/share/a b.md', 'run/fileshare_fetcher/0f/a b.md')).toBe(
      '/api/v1/storage/objects/run/fileshare_fetcher/0f/a%20b.md',
    );
    expect(sourceLink('', 'upload/x.pdf', 'https://weir.example.com')).toBe(
      'https://weir.example.com/api/v1/storage/objects/upload/x.pdf',
    );
    expect(sourceLink('file:///srv/share/a.md', null)).toBeNull();
    expect(sourceLink('javascript:alert(1)', null)).toBeNull();
  });

  it('percent-encodes each key segment and keeps its slashes', () => {
    expect(storedObjectPath('e/s/Møte #2?.md')).toBe('/api/v1/storage/objects/e/s/M%C3%B8te%20%232%3F.md');
  });

  it('takes the public address from WEIR_PUBLIC_URL, else http://HOST:PORT', () => {
    expect(publicBaseUrl(loadSettings({ WEIR_PUBLIC_URL: 'https://weir.example.com/proxy/' }))).toBe(
      'https://weir.example.com/proxy',
    );
    expect(publicBaseUrl(loadSettings({ HOST: 'weir.internal', PORT: '9000' }))).toBe(
      'http://weir.internal:9000',
    );
    expect(publicBaseUrl(loadSettings({ HOST: '0.0.0.0' }))).toBe('http://127.0.0.1:8080');
    expect(publicBaseUrl(loadSettings({ HOST: '::' }))).toBe('http://[::1]:8080');
    for (const wrong of ['file:///srv', 'weir.example.com', 'https://weir.example.com/?q', 'javascript:x'])
      expect(() => loadSettings({ WEIR_PUBLIC_URL: wrong }), wrong).toThrow(/public_url/);
  });
});
