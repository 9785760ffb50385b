import { describe, expect, it } from 'vitest';
import { describeSource } from './ask-search.js';

const stored = {
  url: 'file:///srv/weir/docs/console.md',
  object_key: 'e1/fileshare_fetcher/9e/console.md',
  link: '/api/v1/storage/objects/e1/fileshare_fetcher/9e/console.md',
  document_id: 'd1',
  title: 'Web console',
  heading_path: ['Webhooks'],
};

describe('weir ask / search: where a source opens', () => {
  it("prints a stored file's link on the service called, never its file:// origin", () => {
    expect(describeSource(stored, 'http://127.0.0.1:8080')).toEqual({
      name: 'Web console > Webhooks',
      where: 'http://127.0.0.1:8080/api/v1/storage/objects/e1/fileshare_fetcher/9e/console.md',
    });
  });

  it('prints a web page at its own URL, and without a link the key rather than a file:// URL', () => {
    const page = {
      ...stored,
      url: 'https://docs.example.org/vacuum',
      link: 'https://docs.example.org/vacuum',
    };
    expect(describeSource(page, 'http://127.0.0.1:8080').where).toBe('https://docs.example.org/vacuum');
    expect(describeSource({ ...stored, link: null }, 'http://127.0.0.1:8080').where).toBe(stored.object_key);
  });
});
