import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORAGE_EVENTS_TOPIC } from '../src/engine/stage-output.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { engineCombinations } from './helpers/brokers.js';

describe.each(await engineCombinations())('storage event stream on $name', ({ database, broker }) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(database, { broker: await broker.open() });
  });
  afterAll(async () => {
    await test?.close();
  });

  async function runningExecution(): Promise<string> {
    const config = (
      await test.app.inject({
        method: 'POST',
        url: '/api/v1/configs',
        payload: { config_yaml: 'routes:\n  - id: r\n    adapters: [{ type: synthetic_sink }]\n' },
      })
    ).json();
    return (
      await test.app.inject({
        method: 'POST',
        url: `/api/v1/configs/${config.id}/run?skip_init_message=true`,
      })
    ).json().id;
  }

  async function announce(executionId: string, key: string, stage = 'html_to_markdown'): Promise<string> {
    const eventId = uuidv7();
    const body = {
      event_id: eventId,
      event: 'storage.object.created',
      execution_id: executionId,
      config_id: 'c',
      route_id: 'r',
      stage,
      adapter_name: stage,
      correlation_id: 'm',
      key: `${executionId}/${stage}/${key}`,
      size: 1,
      content_type: 'text/markdown',
      timestamp: new Date().toISOString(),
    };
    await test.broker.publishTopic(STORAGE_EVENTS_TOPIC, new TextEncoder().encode(JSON.stringify(body)));
    return eventId;
  }

  const cancel = (id: string) => test.app.inject({ method: 'POST', url: `/api/v1/executions/${id}/cancel` });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
  const eventIds = (body: string) => [...body.matchAll(/^id: (.+)$/gm)].map((match) => match[1]);

  it('streams matching events of several executions and ends when all are terminal', async () => {
    const first = await runningExecution();
    const second = await runningExecution();
    const other = await runningExecution();
    const stream = test.app.inject({
      url: `/api/v1/storage/events?execution_id=${first}&execution_id=${second}&extension=.md&heartbeat_seconds=1`,
    });
    await settle();
    const wanted = [await announce(first, 'a.md'), await announce(second, 'b.md')];
    await announce(first, 'c.json');
    await announce(other, 'd.md');
    await settle();
    await cancel(first);
    await cancel(second);
    const response = await stream;
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(eventIds(response.body)).toEqual(wanted);
    expect(response.body).toContain('event: storage.object.created\ndata: {');
    expect(response.body).toContain(': heartbeat');
    expect(response.body).toMatch(/event: end\ndata: \{"reason":"executions_finished"\}\n\n$/);
    await cancel(other);
  });

  it('resumes after Last-Event-ID and filters by stage and path', async () => {
    const id = await runningExecution();
    const stream = test.app.inject({
      url: `/api/v1/storage/events?execution_id=${id}&stage=html_to_markdown&path=${id}/html_to_markdown/keep`,
      headers: { 'last-event-id': '' },
    });
    await settle();
    await announce(id, 'keep-1.md');
    await announce(id, 'drop.md');
    await announce(id, 'keep-2.md', 'web_scraper');
    const kept = await announce(id, 'keep-3.md');
    await settle();
    await cancel(id);
    const all = eventIds((await stream).body);
    expect(all).toHaveLength(2);
    expect(all[1]).toBe(kept);

    const resumedId = await runningExecution();
    const firstId = await announce(resumedId, 'early.md');
    const resumed = test.app.inject({
      url: `/api/v1/storage/events?execution_id=${resumedId}`,
      headers: { 'last-event-id': firstId },
    });
    await settle();
    await test.broker.publishTopic(
      STORAGE_EVENTS_TOPIC,
      new TextEncoder().encode(
        JSON.stringify({
          event_id: firstId,
          execution_id: resumedId,
          key: `${resumedId}/s/replayed.md`,
          stage: 's',
        }),
      ),
    );
    const later = await announce(resumedId, 'later.md');
    await settle();
    await cancel(resumedId);
    expect(eventIds((await resumed).body)).toEqual([later]);
  });

  it('ends at the timeout', async () => {
    const id = await runningExecution();
    const response = await test.app.inject({
      url: `/api/v1/storage/events?execution_id=${id}&timeout_seconds=1`,
    });
    expect(response.body).toMatch(/event: end\ndata: \{"reason":"timeout"\}/);
    await cancel(id);
  });

  it('answers 422 without an execution id and 404 for an unknown one', async () => {
    expect((await test.app.inject({ url: '/api/v1/storage/events' })).statusCode).toBe(422);
    const unknown = await test.app.inject({ url: `/api/v1/storage/events?execution_id=${uuidv7()}` });
    expect(unknown.statusCode).toBe(404);
  });
});
