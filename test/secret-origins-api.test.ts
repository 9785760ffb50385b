/**
 * Secrets bound to their origins (issue 30), through the API on both databases, against real
 * loopback servers: the wiki (confluence-double), Graph (graph-double), a knowledge base
 * (kbase-doubles) and a recording server of another origin that must never see a credential.
 * - A config sending a secret to an undeclared origin is invalid (E215) and its run is refused.
 * - A secret without origins is sent nowhere; the finding names the setting to add.
 * - With the origin declared, the run completes.
 * - A next link the server returns pointing at another origin fails the run, and that origin
 *   receives no request at all (the secret is asked for per request URL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingServer, startRecordingServer } from './helpers/api-double.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import {
  type ConfluenceDouble,
  DOUBLE_TOKEN,
  DOUBLE_USER,
  startConfluenceDouble,
} from './helpers/confluence-double.js';
import { databaseTargets } from './helpers/databases.js';
import {
  GRAPH_CLIENT_ID,
  GRAPH_CLIENT_SECRET,
  type GraphDouble,
  startGraphDouble,
} from './helpers/graph-double.js';
import {
  type HttpKnowledgeBaseDouble,
  KBASE_TOKEN,
  startHttpKnowledgeBase,
} from './helpers/kbase-doubles.js';

const pages = [1, 2, 3, 4, 5].map((index) => ({
  id: String(1000 + index),
  title: `Page ${index}`,
  version: 1,
  storage: `<p>Page ${index}.</p>`,
}));

const crawl = (baseUrl: string, secret = 'wiki') => `
init_message: { route: crawl, payload: { space: ENG } }
routes:
  - id: crawl
    adapters:
      - type: wiki_space_crawler
        config: { provider: confluence_cloud, base_url: "${baseUrl}", username: "${DOUBLE_USER}", token_secret: ${secret}, rate_limit: 200 }
        retry: { max_attempts: 1 }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
`;

const listDrives = (graph: GraphDouble) => `
init_message: { route: list, payload: {} }
routes:
  - id: list
    adapters:
      - type: fileshare_enumerator
        config:
          provider: sharepoint
          sharepoint: { token_url: "${graph.tokenUrl}", client_id: "${GRAPH_CLIENT_ID}", client_secret_secret: graph, graph_url: "${graph.graphUrl}", site_search: engineering, rate_limit: 200 }
        retry: { max_attempts: 1 }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
`;

describe.each(databaseTargets())('secrets bound to their origins on $name', (target) => {
  let test: TestApp;
  let wiki: ConfluenceDouble;
  let hostileWiki: ConfluenceDouble;
  let graph: GraphDouble;
  let hostileGraph: GraphDouble;
  let kbase: HttpKnowledgeBaseDouble;
  let elsewhere: RecordingServer;

  beforeAll(async () => {
    elsewhere = await startRecordingServer();
    wiki = await startConfluenceDouble({ pages });
    hostileWiki = await startConfluenceDouble({ pages, nextLinkOrigin: elsewhere.url });
    const file = {
      id: 'f1',
      name: 'a.md',
      folder: '',
      bytes: Buffer.from('# A\n'),
      mimeType: 'text/markdown',
    };
    graph = await startGraphDouble([file, { ...file, id: 'f2', name: 'b.md' }]);
    hostileGraph = await startGraphDouble([file, { ...file, id: 'f2', name: 'b.md' }], {
      nextLinkOrigin: elsewhere.url,
    });
    kbase = await startHttpKnowledgeBase();
    const origin = (url: string) => new URL(url).origin;
    test = await createTestApp(target, {
      environment: {
        WEIR_FETCH_ALLOWED_CIDRS: '127.0.0.0/8',
        WEIR_SECRET_WIKI: DOUBLE_TOKEN,
        WEIR_SECRET_WIKI_ORIGINS: `${wiki.url},${hostileWiki.url}`,
        WEIR_SECRET_GRAPH: GRAPH_CLIENT_SECRET,
        WEIR_SECRET_GRAPH_ORIGINS: `${origin(graph.graphUrl)},${origin(hostileGraph.graphUrl)}`,
        WEIR_SECRET_KBASE: KBASE_TOKEN,
        WEIR_SECRET_KBASE_ORIGINS: origin(kbase.url),
        // Set, but declaring no origins: sent nowhere.
        WEIR_SECRET_BARE: DOUBLE_TOKEN,
      },
    });
  });
  afterAll(async () => {
    await test?.close();
    await Promise.all(
      [wiki, hostileWiki, graph, hostileGraph, kbase, elsewhere].map((server) => server?.close()),
    );
  });

  async function create(yaml: string) {
    const created = await test.app.inject({
      method: 'POST',
      url: '/api/v1/configs',
      payload: { config_yaml: yaml },
    });
    expect(created.statusCode).toBe(201);
    return created.json();
  }

  /** Runs a config to its end: the final status and the errors of its failed messages. */
  async function run(configId: string) {
    const started = await test.app.inject({ method: 'POST', url: `/api/v1/configs/${configId}/run` });
    expect(started.statusCode).toBe(201);
    const id = started.json().id;
    const waited = await test.app.inject({
      method: 'POST',
      url: `/api/v1/executions/${id}/wait`,
      payload: { timeout_seconds: 60 },
    });
    const failed = (await test.app.inject({ url: `/api/v1/executions/${id}/lineage?status=failed` })).json();
    return {
      status: waited.json().status as string,
      errors: (failed.messages as { error: string | null }[]).map((message) => message.error),
    };
  }

  it('refuses a wiki config sending the token to another origin (E215) and refuses to run it', async () => {
    const config = await create(crawl(elsewhere.url));
    expect(config.is_runnable).toBe(false);
    expect(config.validation_report.findings).toEqual([
      expect.objectContaining({
        code: 'E215',
        path: 'routes[0].adapters[0].config.base_url',
        message: expect.stringContaining(`secret wiki may not be sent to ${elsewhere.url}`),
      }),
    ]);
    const refused = await test.app.inject({ method: 'POST', url: `/api/v1/configs/${config.id}/run` });
    expect(refused.statusCode).toBe(400);
    expect(JSON.stringify(refused.json())).toContain('config_invalid');
    expect(elsewhere.requests).toEqual([]);
  });

  it('sends a secret without origins nowhere and names the setting to add', async () => {
    const config = await create(crawl(wiki.url, 'bare'));
    expect(config.validation_report.findings).toEqual([
      expect.objectContaining({
        code: 'E215',
        message: expect.stringContaining(
          `secret bare has no declared origins, so it is not sent to ${wiki.url}`,
        ),
        remediation: `Set WEIR_SECRET_BARE_ORIGINS=${wiki.url} (the origins this config uses) and restart.`,
      }),
    ]);
    expect(
      (await test.app.inject({ method: 'POST', url: `/api/v1/configs/${config.id}/run` })).statusCode,
    ).toBe(400);
  });

  it('refuses SharePoint and kbase configs whose URLs leave the declared origins', async () => {
    const sharepoint = await create(
      listDrives({ ...graph, graphUrl: `${elsewhere.url}/v1.0`, tokenUrl: `${elsewhere.url}/token` }),
    );
    expect(
      sharepoint.validation_report.findings
        .map((finding: { code: string; path: string }) => finding.path)
        .sort(),
    ).toEqual([
      'routes[0].adapters[0].config.sharepoint.graph_url',
      'routes[0].adapters[0].config.sharepoint.token_url',
    ]);
    const publish = await create(`
routes:
  - id: publish
    adapters:
      - type: kbase_writer
        config: { target: { kind: http, url: "${elsewhere.url}/pages", token_secret: kbase } }
`);
    expect(publish.validation_report.findings).toEqual([
      expect.objectContaining({ code: 'E215', path: 'routes[0].adapters[0].config.target.url' }),
    ]);
    expect(elsewhere.requests).toEqual([]);
  });

  it('runs with the origin declared, and shows the origins (not the values) in /system/config', async () => {
    const config = await create(crawl(wiki.url));
    expect(config.validation_report.findings).toEqual([]);
    expect(await run(config.id)).toEqual({ status: 'completed', errors: [] });
    const shown = (await test.app.inject({ url: '/api/v1/system/config' })).json().settings;
    expect(shown.secret_origins.wiki).toEqual([wiki.url, hostileWiki.url]);
    expect(JSON.stringify(shown)).not.toContain(DOUBLE_TOKEN);
  });

  it('fails a wiki run whose next link points at another origin, which receives nothing', async () => {
    const config = await create(crawl(hostileWiki.url));
    expect(config.is_runnable).toBe(true);
    const result = await run(config.id);
    expect(result.status).toBe('failed');
    expect(result.errors).toEqual([
      expect.stringContaining(`secret wiki may not be sent to ${elsewhere.url}`),
    ]);
    // The first page was read with the token from the declared origin; the next one never left.
    expect(hostileWiki.requests.some((line) => line.includes('/pages?'))).toBe(true);
    expect(elsewhere.requests).toEqual([]);
  });

  it('fails a SharePoint run whose @odata.nextLink points at another origin, which receives nothing', async () => {
    const config = await create(listDrives(hostileGraph));
    expect(config.is_runnable).toBe(true);
    const result = await run(config.id);
    expect(result.status).toBe('failed');
    expect(result.errors).toEqual([
      expect.stringContaining(`secret graph may not be sent to ${elsewhere.url}`),
    ]);
    expect(hostileGraph.requests.some((line) => line.includes('/root/delta'))).toBe(true);
    expect(elsewhere.requests).toEqual([]);
  });
});
