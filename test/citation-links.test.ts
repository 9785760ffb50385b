/**
 * Citations that open (issue 31): documents read from a file share were cited by their
 * `file://` path, which no browser opens from an http page. A file-share ingestion like
 * examples/weir-docs.yaml over a temporary folder, then search and chat: every source keeps its
 * `file://` origin in `url` and has a `link`, http(s) or a path of the service, and following
 * that link returns the stored bytes of the file.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { databaseTargets } from './helpers/databases.js';

const files: Record<string, string> = {
  'replication.md':
    '# Replication\n\nThe standby server replays the write-ahead log it receives from the primary.\n',
  'guides/rotation notes.md':
    '# Rotation\n\nThe on-call rotation hands over the write-ahead log review every Tuesday at noon.\n',
  'checklist.txt': 'Before a release, archive the write-ahead log and check the standby server.\n',
};

const pipeline = (root: string) => `
name: share-docs
init_message:
  route: list
  payload:
    root: ${JSON.stringify(root)}
routes:
  - id: list
    adapters:
      - type: fileshare_enumerator
        config:
          extensions: [.md, .txt]
        destination: documents
  - id: documents
    adapters:
      - type: fileshare_fetcher
      - type: document_converter
      - type: smart_segmenter
      - type: segment_publisher
        destination: embed
  - id: embed
    adapters:
      - type: embedding_generator
`;

/** An http(s) URL, or a path of the service itself (one leading slash: `//host` is another host). */
const openable = /^(https?:\/\/|\/(?![/\\]))/;

describe.each(databaseTargets())('citations of file-share documents on $name', (target) => {
  let test: TestApp;
  let share: string;

  beforeAll(async () => {
    share = await mkdtemp(path.join(tmpdir(), 'weir-share-'));
    for (const [name, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(share, name)), { recursive: true });
      await writeFile(path.join(share, name), text);
    }
    test = await createTestApp(target, { settings: { fileshare_roots: [share] } });
    const created = await test.app.inject({
      method: 'POST',
      url: '/api/v1/configs',
      payload: { config_yaml: pipeline(share) },
    });
    expect(created.statusCode, created.body).toBe(201);
    const run = await test.app.inject({ method: 'POST', url: `/api/v1/configs/${created.json().id}/run` });
    expect(run.statusCode, run.body).toBe(201);
    const waited = await test.app.inject({
      method: 'POST',
      url: `/api/v1/executions/${run.json().id}/wait`,
      payload: { timeout_seconds: 60 },
    });
    expect(waited.json()).toMatchObject({ completed: true, status: 'completed' });
  }, 90_000);

  afterAll(async () => {
    await test?.close();
    await rm(share, { recursive: true, force: true });
  });

  /** Follows a source's link through the app; the stored file's bytes come back. */
  async function expectOpens(source: { url: string | null; link: string | null }) {
    expect(source.url).toMatch(/^file:\/\//);
    expect(source.link, JSON.stringify(source)).toMatch(openable);
    const relative = (source.link as string).replace(/^https?:\/\/[^/]+/, '');
    const opened = await test.app.inject({ url: relative });
    expect(opened.statusCode, relative).toBe(200);
    const name = decodeURIComponent(new URL(source.url as string).pathname).slice(share.length + 1);
    expect(opened.body).toBe(files[name]);
  }

  it('cites every chat source with a link that opens the stored file', async () => {
    const answer = await test.app.inject({
      method: 'POST',
      url: '/api/v1/chat/complete',
      payload: { query: 'What happens to the write-ahead log?', configuration: { limit: 10 } },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const sources = answer.json().sources as { source: { url: string | null; link: string | null } }[];
    expect(sources.length).toBeGreaterThanOrEqual(3);
    for (const source of sources) await expectOpens(source.source);
    const named = new Set(
      sources.map((source) => path.basename(new URL(source.source.url as string).pathname)),
    );
    expect(named).toEqual(new Set(['replication.md', 'rotation%20notes.md', 'checklist.txt']));
  });

  it('gives search results the same links', async () => {
    const found = await test.app.inject({
      method: 'POST',
      url: '/api/v1/chat/search/keyword',
      payload: { query: 'standby server', limit: 10 },
    });
    expect(found.statusCode, found.body).toBe(200);
    const results = found.json().results as { source: { url: string | null; link: string | null } }[];
    expect(results.length).toBeGreaterThan(0);
    for (const result of results) await expectOpens(result.source);
  });
});
