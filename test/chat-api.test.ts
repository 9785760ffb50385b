import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { itWhere } from './helpers/applies.js';
import { vectorDatabaseTargets } from './helpers/databases.js';
import { type KnowledgeFixture, seedKnowledgeFixture } from './helpers/knowledge-fixture.js';
import { type LlmServer, startLlmServer } from './helpers/llm-server.js';

interface StreamItem {
  event?: string;
  data?: unknown;
  comment?: string;
}

/** Splits an event stream into events and comments, checking each event is `event:` then `data:`. */
function parseStream(text: string): StreamItem[] {
  return text
    .split('\n\n')
    .filter((block) => block.length > 0)
    .map((block) => {
      if (block.startsWith(':')) return { comment: block.slice(1).trim() };
      const lines = block.split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^event: /);
      expect(lines[1]).toMatch(/^data: /);
      return { event: lines[0]?.slice(7), data: JSON.parse(lines[1]?.slice(6) ?? 'null') };
    });
}

describe.each(await vectorDatabaseTargets())('chat API on $name', (target) => {
  let test: TestApp;
  let llm: LlmServer;
  let fixture: KnowledgeFixture;
  const vectors = target.vectors;
  beforeAll(async () => {
    llm = await startLlmServer();
    test = await createTestApp(target, {
      settings: {
        chat_heartbeat_ms: 20,
        llm_profiles: [
          { name: 'extractive', provider: 'extractive', timeout_ms: 60_000 },
          {
            name: 'local',
            provider: 'openai',
            base_url: llm.baseUrl,
            model: 'test-model',
            api_key: 'sk-test',
            timeout_ms: 2000,
          },
          { name: 'slow', provider: 'openai', base_url: llm.baseUrl, model: 'test-model', timeout_ms: 200 },
          {
            name: 'nowhere',
            provider: 'openai',
            base_url: 'http://127.0.0.1:9/v1',
            model: 'm',
            timeout_ms: 2000,
          },
        ],
      },
    });
    fixture = await seedKnowledgeFixture(test.database);
  });
  afterAll(async () => {
    await test?.close();
    await llm?.close();
  });
  beforeEach(() => {
    llm.behaviour = 'answer';
    llm.answer = 'Runs create executions [1]. Vacuum reclaims space [2].';
    llm.requests = [];
    llm.aborted = 0;
  });
  const complete = (payload: object) =>
    test.app.inject({ method: 'POST', url: '/api/v1/chat/complete', payload });
  const stream = (payload: object) =>
    test.app.inject({ method: 'POST', url: '/api/v1/chat/stream', payload });

  it('answers extractively by default, without any language model, citing its passages', async () => {
    const response = await complete({ query: 'How do I run a pipeline?' });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      provider: 'extractive',
      profile: 'extractive',
      model: 'extractive',
      usage: null,
    });
    expect(body.strategy).toBe(vectors ? 'ensemble' : 'keyword');
    expect(body.answer).toMatch(/^Extractive answer/);
    expect(body.answer).toContain('To run a pipeline, store its config and call run. [1]');
    expect(body.sources[0]).toMatchObject({ citation: 1, cited: true, segment_id: fixture.segments.run });
    expect(body.sources[0].source.url).toBe('https://docs.example.org/pipelines');
    expect(llm.requests).toHaveLength(0);
  });

  it('prompts an OpenAI-compatible model with numbered sources and maps its citations back', async () => {
    const response = await complete({
      query: 'How do I run a pipeline?',
      history: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'hi' },
      ],
      configuration: {
        llm_profile: 'local',
        temperature: 0.4,
        max_tokens: 99,
        limit: 3,
        strategy: 'keyword',
      },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      answer: llm.answer,
      provider: 'openai',
      profile: 'local',
      model: 'test-model',
      usage: { prompt_tokens: 42, completion_tokens: 7 },
    });
    const [request] = llm.requests;
    expect(request?.authorization).toBe('Bearer sk-test');
    expect(request?.body).toMatchObject({
      model: 'test-model',
      stream: false,
      temperature: 0.4,
      max_tokens: 99,
    });
    const messages = request?.body.messages ?? [];
    expect(messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(messages[3]?.content).toBe('How do I run a pipeline?');
    const system = messages[0]?.content ?? '';
    expect(system).toContain(
      '[1] Pipelines | Pipelines > Run a pipeline | https://docs.example.org/pipelines',
    );
    expect(system).toContain('To run a pipeline, store its config and call run.');
    expect(body.sources.map((source: { citation: number }) => source.citation)).toEqual(
      body.sources.map((_: unknown, index: number) => index + 1),
    );
    expect(
      body.sources
        .filter((source: { cited: boolean }) => source.cited)
        .map((s: { citation: number }) => s.citation),
    ).toEqual([1, 2].filter((n) => n <= body.sources.length));
  });

  it('applies a template, with request fields taking precedence', async () => {
    const created = await test.app.inject({
      method: 'POST',
      url: '/api/v1/chat/templates',
      payload: {
        name: 'Support',
        persona: 'You are Weir support.',
        system_prompt: 'Answer in one sentence.',
        rag: { strategy: 'keyword', limit: 1 },
        llm: { profile: 'local', temperature: 0.3, max_tokens: 50 },
      },
    });
    expect(created.statusCode).toBe(201);
    const templateId = created.json().id;
    const body = (
      await complete({
        query: 'vacuum dead tuples',
        configuration: { template_id: templateId, temperature: 0.9 },
      })
    ).json();
    expect(body).toMatchObject({ template_id: templateId, profile: 'local', strategy: 'keyword' });
    expect(body.sources).toHaveLength(1);
    expect(body.sources[0].segment_id).toBe(fixture.segments.vacuum);
    const sent = llm.requests[0]?.body;
    expect(sent).toMatchObject({ temperature: 0.9, max_tokens: 50 });
    expect(sent?.messages[0]?.content).toMatch(/^You are Weir support\.\n\nAnswer in one sentence\./);
  });

  it('answers 500 when generation fails or times out', async () => {
    llm.behaviour = 'http-500';
    const failed = await complete({
      query: 'run',
      configuration: { llm_profile: 'local', strategy: 'keyword' },
    });
    expect(failed.statusCode).toBe(500);
    expect(failed.json()).toMatchObject({ code: 'chat_generation_failed' });
    expect(failed.json().detail).toContain('HTTP 500: {"error":{"message":"model overloaded"');
    expect(failed.json().detail).not.toContain('sk-test');
    llm.behaviour = 'stall';
    const stalled = await complete({
      query: 'run',
      configuration: { llm_profile: 'slow', strategy: 'keyword' },
    });
    expect(stalled.statusCode).toBe(500);
    expect(stalled.json().detail).toBe('language model did not answer within 200 ms');
    const unreachable = await complete({
      query: 'run',
      configuration: { llm_profile: 'nowhere', strategy: 'keyword' },
    });
    expect(unreachable.statusCode).toBe(500);
    expect(unreachable.json().detail).toContain('cannot reach the language model of profile nowhere');
  });

  it('streams one sources event, text events, then done', async () => {
    const response = await stream({
      query: 'How do I run a pipeline?',
      configuration: { llm_profile: 'local' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/event-stream');
    const events = parseStream(response.body).filter((item) => item.event);
    expect(events[0]?.event).toBe('sources');
    const sources = (events[0]?.data as { sources: { citation: number; segment_id: string }[] }).sources;
    expect(sources[0]).toMatchObject({ citation: 1, segment_id: fixture.segments.run });
    expect(events.at(-1)).toEqual({ event: 'done', data: { completed: true } });
    const texts = events.slice(1, -1);
    expect(texts.length).toBeGreaterThan(2);
    expect(texts.every((item) => item.event === 'text')).toBe(true);
    expect(texts.map((item) => (item.data as { content: string }).content).join('')).toBe(llm.answer);
    expect(llm.requests[0]?.body.stream).toBe(true);
  });

  it('streams the extractive answer without a language model', async () => {
    const events = parseStream((await stream({ query: 'What does VACUUM reclaim?' })).body).filter(
      (item) => item.event,
    );
    expect(events.map((item) => item.event)).toEqual([
      'sources',
      ...events.slice(1, -1).map(() => 'text'),
      'done',
    ]);
    const text = events
      .slice(1, -1)
      .map((item) => (item.data as { content: string }).content)
      .join('');
    expect(text).toMatch(/^Extractive answer/);
    expect(text).toContain('VACUUM reclaims storage occupied by dead tuples.');
    expect(events.at(-1)?.data).toEqual({ completed: true });
  });

  it('sends an error event before done when generation fails mid-stream', async () => {
    llm.behaviour = 'fail-mid-stream';
    const events = parseStream(
      (await stream({ query: 'run', configuration: { llm_profile: 'local' } })).body,
    ).filter((item) => item.event);
    expect(events.map((item) => item.event)).toEqual(['sources', 'text', 'text', 'error', 'done']);
    expect(events[3]?.data).toMatchObject({ code: 'chat_generation_failed' });
    expect(events[4]?.data).toEqual({ completed: false });
  });

  it('sends heartbeats while the model is silent, then the timeout as an error', async () => {
    llm.behaviour = 'stall';
    const items = parseStream((await stream({ query: 'run', configuration: { llm_profile: 'slow' } })).body);
    expect(items.filter((item) => item.comment === 'heartbeat').length).toBeGreaterThan(2);
    const events = items.filter((item) => item.event);
    expect(events.map((item) => item.event)).toEqual(['sources', 'error', 'done']);
    expect((events[1]?.data as { detail: string }).detail).toBe(
      'language model did not answer within 200 ms',
    );
    expect(events[2]?.data).toEqual({ completed: false });
  });

  it('aborts the upstream request when the client disconnects', async () => {
    llm.behaviour = 'stall';
    const address = await test.app.listen({ port: 0, host: '127.0.0.1' });
    const controller = new AbortController();
    const response = await fetch(`${address}/api/v1/chat/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'run', configuration: { llm_profile: 'local' } }),
      signal: controller.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let received = '';
    while (!received.includes('event: sources'))
      received += new TextDecoder().decode((await reader.read()).value);
    await waitFor(() => llm.requests.length === 1);
    controller.abort();
    await waitFor(() => llm.aborted === 1);
    expect(llm.aborted).toBe(1);
  });

  it('answers 400 for unknown profiles and templates or an empty query, 422 for bad bodies', async () => {
    const cases: [object, string][] = [
      [{ query: 'run', configuration: { llm_profile: 'gpt-nope' } }, 'unknown llm profile "gpt-nope"'],
      [{ query: 'run', configuration: { template_id: '0190a0b0-0000-7000-8000-000000000000' } }, 'not found'],
      [{ query: '  ' }, 'query is empty'],
      [
        { query: 'run', configuration: { embedding_model: 'other', strategy: 'merge' } },
        'unknown embedding model',
      ],
    ];
    for (const [payload, detail] of cases) {
      for (const send of [complete, stream]) {
        const response = await send(payload);
        if (!vectors && JSON.stringify(payload).includes('merge')) {
          expect(response.statusCode).toBe(400);
          continue;
        }
        expect(response.statusCode, JSON.stringify(payload)).toBe(400);
        expect(response.json().detail).toContain(detail);
      }
    }
    for (const payload of [
      {},
      { query: 'x', history: [{ role: 'system', content: 'x' }] },
      { query: 'x', configuration: { strategy: 'magic' } },
      { query: 'x', configuration: { temperature: 3 } },
      { query: 'x', configuration: { unknown: 1 } },
    ]) {
      expect((await complete(payload)).statusCode, JSON.stringify(payload)).toBe(422);
      expect((await stream(payload)).statusCode, JSON.stringify(payload)).toBe(422);
    }
  });

  itWhere(!vectors)('answers the merge strategy with 503 on a database without pgvector', async () => {
    const { docs, norsk } = fixture.executions;
    const merged = await complete({
      query: 'hjul og motor',
      configuration: { strategy: 'merge', sources: [norsk, docs], limit: 7 },
    });
    expect(merged.statusCode).toBe(503);
    expect(merged.json().code).toBe('vector_search_unavailable');
  });

  itWhere(vectors)('merge and sequential strategies search sources by weight and in order', async () => {
    const { docs, norsk } = fixture.executions;
    const merged = await complete({
      query: 'hjul og motor',
      configuration: { strategy: 'merge', sources: [norsk, docs], source_weights: { [norsk]: 0 }, limit: 7 },
    });
    expect(merged.statusCode).toBe(200);
    const mergedSources = merged.json().sources as { source: { execution_id: string }; score: number }[];
    // Weight 0 puts every passage of that source last: both sources present, docs first.
    expect(mergedSources).toHaveLength(7);
    const firstNorsk = mergedSources.findIndex((item) => item.source.execution_id === norsk);
    expect(firstNorsk).toBeGreaterThan(0);
    expect(mergedSources.slice(0, firstNorsk).every((item) => item.source.execution_id === docs)).toBe(true);
    expect(mergedSources.slice(firstNorsk).map((item) => item.source.execution_id)).toEqual(
      mergedSources.slice(firstNorsk).map(() => norsk),
    );
    expect(mergedSources.slice(firstNorsk).every((item) => item.score === 0)).toBe(true);
    const sequential = (
      await complete({
        query: 'hjul og motor',
        configuration: { strategy: 'sequential', sources: [norsk, docs], limit: 4 },
      })
    ).json();
    expect(
      sequential.sources.map((item: { source: { execution_id: string } }) => item.source.execution_id),
    ).toEqual([norsk, norsk, norsk, docs]);
    const strict = (
      await complete({
        query: 'hjul og motor',
        configuration: { strategy: 'sequential', sources: [norsk, docs], limit: 4, min_score: 0.99 },
      })
    ).json();
    expect(strict.sources).toEqual([]);
    expect(strict.answer).toContain('indexed sources do not answer');
  });

  it('context_mode none skips retrieval', async () => {
    const body = (
      await complete({ query: 'hello', configuration: { llm_profile: 'local', context_mode: 'none' } })
    ).json();
    expect(body.sources).toEqual([]);
    expect(body.strategy).toBe('none');
    expect(llm.requests[0]?.body.messages).toEqual([{ role: 'user', content: 'hello' }]);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
