/**
 * Weir's own outcome of an execution (issue 31 item 1; docs/engine.md, "Outcomes"): a run whose
 * messages partly failed is `partial`, a run that found nothing to do is `empty` and says why,
 * in the execution answer, the lists, the wait answer, the bus events and the webhook bodies.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WeirEvent } from '../src/events/event-bus.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { engineCombinations } from './helpers/brokers.js';
import { LOOPBACK_FETCH, startTestSite, type TestSite } from './helpers/test-site.js';
import { startWebhookReceiver } from './helpers/webhook-receiver.js';

const SECRET = 'receiver-secret-0123456789';

/** `count` messages to a sink that fails every `failEvery`-th one (1: all of them). */
const fanoutYaml = (count: number, failEvery = 0) => `
name: outcome-fanout
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: ${count} }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        config: { fail_every: ${failEvery}, failure: permanent }
        retry: { max_attempts: 1, backoff_ms: 0 }
`;

describe.each(await engineCombinations())('execution outcomes on $name', ({ database: target, broker }) => {
  let test: TestApp;
  let site: TestSite;
  let emptyFolder: string;
  beforeAll(async () => {
    site = await startTestSite();
    emptyFolder = await mkdtemp(path.join(tmpdir(), 'weir-empty-share-'));
    test = await createTestApp(target, {
      broker: await broker.open(),
      settings: { ...LOOPBACK_FETCH, fileshare_roots: [emptyFolder] },
      environment: { WEIR_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8, ::1/128' },
    });
  });
  afterAll(async () => {
    await test?.close();
    await site?.close();
    if (emptyFolder) await rm(emptyFolder, { recursive: true, force: true });
  });

  /** Runs `yaml` to its end: the wait answer, the execution, the bus events of it. */
  async function runToEnd(yaml: string) {
    const created = await test.app.inject({
      method: 'POST',
      url: '/api/v1/configs',
      payload: { config_yaml: yaml },
    });
    expect(created.statusCode).toBe(201);
    const events: WeirEvent[] = [];
    const unsubscribe = test.events.subscribe((event) => events.push(event));
    try {
      const run = await test.app.inject({ method: 'POST', url: `/api/v1/configs/${created.json().id}/run` });
      expect(run.statusCode).toBe(201);
      // The answer re-reads the execution after its init message is published: a run that
      // ends at once (an empty folder, on a fast broker) may already show its end here. While
      // it runs, it has no outcome and no errors yet.
      const started = run.json();
      if (started.status === 'running') expect(started).toMatchObject({ outcome: null, first_errors: [] });
      else expect(['completed', 'failed']).toContain(started.status);
      const id = run.json().id;
      const waited = await test.app.inject({
        method: 'POST',
        url: `/api/v1/executions/${id}/wait`,
        payload: { timeout_seconds: 60 },
      });
      const execution = (await test.app.inject({ url: `/api/v1/executions/${id}` })).json();
      const ended = events.find(
        (event) =>
          event.execution_id === id && ['execution.completed', 'execution.failed'].includes(event.type),
      );
      return { id, waited: waited.json(), execution, ended };
    } finally {
      unsubscribe();
    }
  }

  it('a run whose every message reached the end succeeded, with no errors', async () => {
    const { waited, execution, ended } = await runToEnd(fanoutYaml(3));
    expect(waited).toMatchObject({
      completed: true,
      status: 'completed',
      outcome: 'succeeded',
      first_errors: [],
    });
    expect(execution).toMatchObject({ status: 'completed', outcome: 'succeeded', first_errors: [] });
    expect(ended).toMatchObject({ type: 'execution.completed', outcome: 'succeeded', first_errors: [] });
  });

  it('a completed run with failed messages is partial, with its first errors, in the lists too', async () => {
    const { id, waited, execution, ended } = await runToEnd(fanoutYaml(6, 2));
    expect(waited).toMatchObject({ status: 'completed', statistics: { failed_messages: 3 } });
    expect(execution).toMatchObject({ status: 'completed', error: null, outcome: 'partial' });
    expect(execution.first_errors).toHaveLength(3);
    expect(execution.first_errors[0]).toMatchObject({
      route_id: 'sink',
      stage: 'synthetic_sink',
      status: 'failed',
      error: expect.stringMatching(/^synthetic failure of message \d$/),
    });
    expect(waited.outcome).toBe('partial');
    expect(ended).toMatchObject({ type: 'execution.completed', outcome: 'partial' });
    const listed = (await test.app.inject({ url: '/api/v1/executions?limit=100' })).json();
    expect(listed.executions.find((row: { id: string }) => row.id === id)).toMatchObject({
      outcome: 'partial',
      first_errors: execution.first_errors,
    });
  });

  it('lists by outcome: the runs that need attention, and the schema documents outcome', async () => {
    const succeeded = await runToEnd(fanoutYaml(2));
    const partial = await runToEnd(fanoutYaml(4, 2));
    const attention = (
      await test.app.inject({ url: '/api/v1/executions?outcome=failed,partial,empty&limit=1000' })
    ).json();
    const ids = attention.executions.map((row: { id: string }) => row.id);
    expect(ids).toContain(partial.id);
    expect(ids).not.toContain(succeeded.id);
    for (const row of attention.executions) expect(['failed', 'partial', 'empty']).toContain(row.outcome);
    const refused = await test.app.inject({ url: '/api/v1/executions?outcome=worked' });
    expect(refused.statusCode).toBe(422);
    const document = (await test.app.inject({ url: '/openapi.json' })).json();
    const schemas = document.components.schemas;
    const outcomeSchema = JSON.stringify(schemas.ExecutionResponse.properties.outcome);
    for (const outcome of ['succeeded', 'partial', 'failed', 'empty', 'null'])
      expect(outcomeSchema).toContain(`"${outcome}"`);
    expect(schemas.ExecutionResponse.required).toEqual(expect.arrayContaining(['outcome', 'first_errors']));
    expect(schemas.ExecutionWaitResponse.properties).toHaveProperty('outcome');
    expect(schemas.OutcomeError.properties.status).toBeDefined();
  });

  it('a run whose every message failed is failed', async () => {
    const { execution, ended } = await runToEnd(fanoutYaml(3, 1));
    expect(execution).toMatchObject({ status: 'failed', outcome: 'failed' });
    expect(execution.first_errors).toHaveLength(3);
    expect(ended).toMatchObject({ type: 'execution.failed', outcome: 'failed' });
  });

  it('a sitemap answering 404 makes an empty run that names the sitemap', async () => {
    const { waited, execution } = await runToEnd(`
name: outcome-missing-sitemap
routes:
  - id: pages
    adapters:
      - type: sitemap_parser
        config: { url: "${site.baseUrl}/no-such-sitemap.xml" }
      - type: web_scraper
`);
    expect(waited).toMatchObject({ status: 'completed', statistics: { skipped_messages: 1 } });
    expect(execution.outcome).toBe('empty');
    expect(execution.first_errors).toEqual([
      expect.objectContaining({
        stage: 'sitemap_parser',
        status: 'skipped',
        error: `${site.baseUrl}/no-such-sitemap.xml answered 404`,
      }),
    ]);
  });

  it('a sitemap whose URLs are all filtered out makes an empty run that says so', async () => {
    const { execution } = await runToEnd(`
name: outcome-filtered-sitemap
routes:
  - id: pages
    adapters:
      - type: sitemap_parser
        config: { url: "${site.baseUrl}/sitemaps/pages.xml", include: ["^https://nowhere\\\\.example/"] }
      - type: web_scraper
`);
    expect(execution.outcome).toBe('empty');
    expect(execution.first_errors[0].error).toMatch(
      /no page URL to fetch \(1 sitemaps read, \d+ URLs found, \d+ filtered/,
    );
  });

  it('robots.txt disallowing every page makes an empty run whose errors quote the rule', async () => {
    const { execution } = await runToEnd(`
name: outcome-robots
routes:
  - id: pages
    adapters:
      - type: sitemap_parser
        config: { url: "${site.baseUrl}/sitemaps/pages.xml" }
      - type: url_expander
      - type: web_scraper
        config: { user_agent: BadBot }
`);
    expect(execution).toMatchObject({ status: 'completed', outcome: 'empty' });
    expect(execution.first_errors.length).toBeGreaterThan(0);
    for (const entry of execution.first_errors) {
      expect(entry).toMatchObject({ stage: 'web_scraper', status: 'skipped' });
      expect(entry.error).toMatch(/disallowed by .*robots\.txt/);
    }
  });

  it('an empty folder makes an empty run that names the folder', async () => {
    const { execution } = await runToEnd(`
name: outcome-empty-folder
routes:
  - id: files
    adapters:
      - type: fileshare_enumerator
        config: { root: "${emptyFolder}" }
      - type: synthetic_sink
`);
    expect(execution).toMatchObject({ status: 'completed', outcome: 'empty' });
    expect(execution.first_errors).toEqual([
      expect.objectContaining({
        stage: 'fileshare_enumerator',
        status: 'skipped',
        error: `${emptyFolder} holds no files with extension .pdf, .docx, .pptx, .xlsx, .html, .htm, .md, .markdown, .txt`,
      }),
    ]);
  });

  it('execution.completed webhooks carry the outcome and its first errors', async () => {
    const receiver = await startWebhookReceiver(SECRET);
    try {
      const registered = await test.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        payload: { url: receiver.url, event_types: ['execution.completed'], secret: SECRET },
      });
      expect(registered.statusCode).toBe(201);
      const { id, execution } = await runToEnd(fanoutYaml(4, 2));
      const deliveries = await receiver.waitFor(1, 20_000);
      const body = deliveries
        .map((delivery) => delivery.json)
        .find((json) => json?.data?.execution_id === id);
      expect(body).toMatchObject({
        type: 'execution.completed',
        data: { status: 'completed', outcome: 'partial', first_errors: execution.first_errors },
      });
      await test.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${registered.json().id}` });
    } finally {
      await receiver.close();
    }
  });
});
