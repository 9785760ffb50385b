/**
 * The `sharepoint` file-share provider end to end against a Microsoft Graph double on
 * loopback: fileshare_enumerator lists the drive through its delta, fileshare_fetcher
 * downloads through Graph's 302 without credentials, document_converter and the index take it
 * from there. A second run of the config reads only the changes: edited and added files are
 * fetched, deleted ones leave search.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSearchService } from '../src/search/search-service.js';
import { databaseTargets } from './helpers/databases.js';
import { createTestEngine, runToStatus, type TestEngine } from './helpers/engine.js';
import {
  GRAPH_CLIENT_ID,
  GRAPH_CLIENT_SECRET,
  type GraphDouble,
  startGraphDouble,
} from './helpers/graph-double.js';
import { LOOPBACK_FETCH } from './helpers/test-site.js';

const fixture = (name: string) => readFile(new URL(`./fixtures/${name}`, import.meta.url));

const pipeline = (graph: GraphDouble, secret = 'graph') => {
  const connection = `{ token_url: "${graph.tokenUrl}", client_id: "${GRAPH_CLIENT_ID}", client_secret_secret: ${secret}, graph_url: "${graph.graphUrl}", site_search: engineering, rate_limit: 200 }`;
  return `
init_message:
  route: list
  payload: {}
routes:
  - id: list
    adapters:
      - type: fileshare_enumerator
        config: { provider: sharepoint, sharepoint: ${connection} }
        retry: { max_attempts: 1 }
        destination: documents
  - id: documents
    adapters:
      - type: fileshare_fetcher
        config: { sharepoint: ${connection} }
      - type: document_converter
      - type: smart_segmenter
      - type: segment_publisher
        destination: embed
  - id: embed
    adapters:
      - type: embedding_generator
`;
};

describe.each(databaseTargets())('SharePoint file share on $name', (target) => {
  let engine: TestEngine;
  let graph: GraphDouble;
  beforeAll(async () => {
    graph = await startGraphDouble([
      {
        id: '01BYE5RZ6QN3ZWBTUFOFD3GSPGOHDJD36K',
        name: 'Møtereferat 2026.docx',
        folder: 'Shared/Reports',
        bytes: await fixture('documents/memo.docx'),
        mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      },
      {
        id: '01BYE5RZ2KXWOXP7EVENFXJCDVVVONWAWO',
        name: 'Field guide.pdf',
        folder: '',
        bytes: await fixture('site/files/guide.pdf'),
        mimeType: 'application/pdf',
      },
      {
        id: '01BYE5RZ5MYLM2SMX75ZBIPQZIHT6OAYPB',
        name: 'notes.md',
        folder: 'Shared',
        bytes: Buffer.from('# Rotation notes\n\nThe on-call rotation changes every Tuesday at noon.\n'),
        mimeType: 'text/markdown',
      },
    ]);
    engine = await createTestEngine(target, {
      settings: {
        ...LOOPBACK_FETCH,
        secrets: { graph: GRAPH_CLIENT_SECRET, wrong: 'not-it' },
        // The double serves the token endpoint and Graph from one origin.
        secret_origins: { graph: [new URL(graph.graphUrl).origin], wrong: [new URL(graph.graphUrl).origin] },
      },
    });
  });
  afterAll(async () => {
    await engine?.close();
    await graph?.close();
  });

  const runConfig = (configId: string, status: 'completed' | 'failed') =>
    runToStatus(engine, configId, status);

  it('indexes a drive, then only what changed, and forgets deleted files', async () => {
    const config = await engine.configs.create({ config_yaml: pipeline(graph) });
    graph.throttle(/\/root\/delta$/, 1);
    const first = await runConfig(config.id, 'completed');
    expect(first.filter((row) => row.status !== 'completed').map((row) => row.error)).toEqual([]);
    const downloads = () => graph.requests.filter((line) => line.endsWith('/content')).length;
    expect(downloads()).toBe(3);

    const search = createSearchService({ db: engine.database.db, embedders: undefined });
    const top = async (query: string) =>
      (await search.search('keyword', { query, limit: 5 })).results[0]?.source;
    expect(await top('bucket service account owners')).toMatchObject({
      url: 'https://contoso.sharepoint.com/sites/Engineering/Shared%20Documents/Shared/Reports/M%C3%B8tereferat%202026.docx',
    });
    expect((await top('on-call rotation tuesday'))?.title).toBe('Rotation notes');

    // Unchanged: the delta link of the completed run returns nothing.
    graph.requests.length = 0;
    await runConfig(config.id, 'completed');
    expect(downloads()).toBe(0);

    // One edited, one added, one deleted.
    graph.put({
      id: '01BYE5RZ5MYLM2SMX75ZBIPQZIHT6OAYPB',
      name: 'notes.md',
      folder: 'Shared',
      bytes: Buffer.from('# Rotation notes\n\nThe on-call rotation now changes every Thursday morning.\n'),
      mimeType: 'text/markdown',
    });
    graph.put({
      id: '01BYE5RZ7FBQHNDRD2WBCI5ZMQMYYNP4OF',
      name: 'Incident review.md',
      folder: 'Shared',
      bytes: Buffer.from(
        '# Incident review\n\nThe replica lag alert fired because autovacuum starved the WAL sender.\n',
      ),
      mimeType: 'text/markdown',
    });
    graph.remove('01BYE5RZ2KXWOXP7EVENFXJCDVVVONWAWO');
    graph.requests.length = 0;
    await runConfig(config.id, 'completed');
    expect(graph.requests.filter((line) => line.endsWith('/content')).sort()).toEqual([
      expect.stringContaining('/items/01BYE5RZ5MYLM2SMX75ZBIPQZIHT6OAYPB/content'),
      expect.stringContaining('/items/01BYE5RZ7FBQHNDRD2WBCI5ZMQMYYNP4OF/content'),
    ]);
    expect((await top('rotation thursday morning'))?.title).toBe('Rotation notes');
    expect((await top('replica lag alert wal sender'))?.title).toBe('Incident review');
    const guide = await search.search('keyword', { query: 'Weir Field Guide', limit: 10 });
    expect(guide.results.map((result) => result.source.url)).not.toContain(
      'https://contoso.sharepoint.com/sites/Engineering/Shared%20Documents/Field%20guide.pdf',
    );
  });

  it('fails at once when the token endpoint refuses the client secret', async () => {
    const config = await engine.configs.create({ config_yaml: pipeline(graph, 'wrong') });
    const lineage = await runConfig(config.id, 'failed');
    const failed = lineage.filter((row) => row.status === 'failed');
    expect(failed.map((row) => [row.stage, row.attempts])).toEqual([['fileshare_enumerator', 1]]);
    expect(failed[0]?.error).toMatch(/refused the client credentials \(401\)/);
  });
});
