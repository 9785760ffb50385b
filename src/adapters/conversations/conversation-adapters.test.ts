import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Value } from 'typebox/value';
import { afterAll, describe, expect, it } from 'vitest';
import { toChatGpt, toJsonl, toSlack } from '../../../test/helpers/conversation-exports.js';
import { generateConversations } from '../../../test/helpers/conversation-fixtures.js';
import { startLlmServer } from '../../../test/helpers/llm-server.js';
import { compactConversation } from '../../conversations/compact.js';
import type { AdapterContext, AdapterDefinition } from '../adapter.js';
import { collectOutputs, createAdapterTestKit, memoryFanIn } from '../adapter-testing.js';
import { convBatchProcessor } from './conv-batch-processor.js';
import { convCatalog } from './conv-catalog.js';
import { convEnumerator } from './conv-enumerator.js';
import { convFilter } from './conv-filter.js';
import { convFilteredCollector } from './conv-filtered-collector.js';
import { convNorwegianFilter } from './conv-norwegian-filter.js';
import { convCatalogWriter } from './report-writers.js';

const root = await mkdtemp(path.join(tmpdir(), 'weir-conv-adapters-'));
const llm = await startLlmServer();
const kit = await createAdapterTestKit({
  settings: {
    fileshare_roots: [root],
    llm_profiles: [
      { name: 'namer', provider: 'openai', base_url: llm.baseUrl, model: 'm', timeout_ms: 60_000 },
    ],
  },
});
afterAll(async () => {
  await kit.close();
  await llm.close();
  await rm(root, { recursive: true, force: true });
});

async function run(
  adapter: AdapterDefinition,
  payload: Record<string, unknown>,
  config: Record<string, unknown> = {},
  context: Partial<AdapterContext> = {},
) {
  const handler = adapter.create(
    Value.Default(adapter.config, structuredClone(config)) as never,
    kit.resources,
  );
  return collectOutputs(await handler(payload, kit.context(context)));
}

const fixture = generateConversations({ seed: 5, count: 30 });
await writeFile(path.join(root, 'support.jsonl'), toJsonl(fixture));
for (const [file, body] of toSlack(fixture.slice(0, 10))) {
  await mkdir(path.dirname(path.join(root, 'slack', file)), { recursive: true });
  await writeFile(path.join(root, 'slack', file), body);
}
await writeFile(path.join(root, 'notes.txt'), 'not an export');

describe('conv_enumerator and conv_batch_processor', () => {
  it('lists the export files and Slack folders of a share as packages, with stable ids', async () => {
    const packages = (await run(convEnumerator, { root })).map((output) => output.payload);
    expect(packages.map((found) => [found.path, found.location, found.format])).toEqual([
      ['slack', 'share', 'auto'],
      ['support.jsonl', 'share', 'auto'],
    ]);
    expect((await run(convEnumerator, { root }))[0]?.payload.package_id).toBe(packages[0]?.package_id);
    // An object an earlier stage wrote: its id does not depend on the execution that wrote it.
    const first = await run(convEnumerator, {
      storage_key: '0195d2a4-7a1e-7000-8000-000000000001/fetch/a/export.json',
    });
    const second = await run(convEnumerator, {
      storage_key: '0195d2a4-7a1e-7000-8000-000000000002/fetch/a/export.json',
    });
    expect(first[0]?.payload.package_id).toBe(second[0]?.payload.package_id);
    await expect(run(convEnumerator, { root: tmpdir() })).rejects.toThrow(/outside the allowed roots/);
  });

  it('emits batches that each carry the package total', async () => {
    const [jsonl] = (await run(convEnumerator, { root })).filter(
      (output) => output.payload.path === 'support.jsonl',
    );
    const batches = await run(convBatchProcessor, jsonl?.payload ?? {}, { batch_size: 12 });
    expect(
      batches.map((batch) => [
        batch.payload.batch_index,
        batch.payload.batch_count,
        batch.payload.package_total,
      ]),
    ).toEqual([
      [0, 3, fixture.length],
      [1, 3, fixture.length],
      [2, 3, fixture.length],
    ]);
    expect(batches.flatMap((batch) => batch.payload.conversations as unknown[])).toHaveLength(fixture.length);
    expect(batches[0]?.payload.format).toBe('jsonl');
  });

  it('reads a Slack export uploaded as objects under a storage prefix', async () => {
    for (const [file, body] of toSlack(fixture.slice(0, 10)))
      await kit.storage.put(`uploads/slack/${file}`, body);
    const [found] = await run(convEnumerator, {}, { source: 'storage', key: 'uploads/slack/' });
    expect(found?.payload).toMatchObject({ location: 'storage', key: 'uploads/slack/' });
    const [batch] = await run(convBatchProcessor, found?.payload ?? {});
    expect(batch?.payload).toMatchObject({ format: 'slack', package_total: 10, batch_count: 1 });
  });

  it('reads an export an earlier stage stored (fileshare_fetcher, e.g. from SharePoint)', async () => {
    const stored = await kit.storage.put(
      '0195d2a4-7a1e-7000-8000-000000000003/fileshare_fetcher/ab/conversations.json',
      toChatGpt(fixture.slice(0, 7)),
    );
    const [found] = await run(convEnumerator, { storage_key: stored.key, name: 'conversations.json' });
    const [batch] = await run(convBatchProcessor, found?.payload ?? {});
    expect(batch?.payload).toMatchObject({ format: 'chatgpt', package_total: 7 });
  });

  it('lists rejected conversations, and fails a package with nothing readable or a truncated export', async () => {
    await writeFile(
      path.join(root, 'mixed.jsonl'),
      `${JSON.stringify({ conversation_id: 'ok', turns: [{ role: 'user', text: 'hei' }] })}\n{"conversation_id": "bad"\n`,
    );
    const [mixed] = await run(convBatchProcessor, {
      package_id: 'p',
      location: 'share',
      root,
      path: 'mixed.jsonl',
      format: 'auto',
    });
    expect(mixed?.payload).toMatchObject({
      package_total: 1,
      rejected: [{ conversation_id: 'mixed.jsonl line 2', reason: expect.stringMatching(/^invalid JSON/) }],
    });
    await writeFile(path.join(root, 'empty.jsonl'), '{"no": "id"}\n');
    await expect(
      run(convBatchProcessor, {
        package_id: 'p',
        location: 'share',
        root,
        path: 'empty.jsonl',
        format: 'jsonl',
      }),
    ).rejects.toThrow(
      /package p has no readable conversation \(1 rejected, first: empty\.jsonl line 1: no `conversation_id`/,
    );
    await writeFile(path.join(root, 'conversations.json'), '[{"id": "a", "mapping": {}}, {"id": "b", "mapp');
    await expect(
      run(convBatchProcessor, {
        package_id: 'p',
        location: 'share',
        root,
        path: 'conversations.json',
        format: 'auto',
      }),
    ).rejects.toMatchObject({
      permanent: true,
      message: expect.stringMatching(/not a valid ChatGPT export/),
    });
  });
});

const message = (
  turns: Array<{ role: 'user' | 'assistant'; text: string }>,
  extra: Record<string, unknown> = {},
) => {
  const { turns: _turns, ...conversation } = compactConversation({
    conversation_id: 'c1',
    source_format: 'jsonl',
    started_at: '2025-03-01T10:00:00.000Z',
    turns,
  });
  return {
    package_id: 'p',
    package_total: 3,
    conversation_id: 'c1',
    storage_key: 'k',
    line: 0,
    conversation,
    dropped: false,
    ...extra,
  };
};
const norwegian = message([
  {
    role: 'user',
    text: 'Hei, jeg har glemt passordet mitt og får ikke logget inn på kontoen. Kan dere hjelpe meg?',
  },
  {
    role: 'assistant',
    text: 'Åpne innloggingssiden og klikk på «Glemt passord», så sender vi deg en lenke på e-post.',
  },
]);

describe('conv_filter and conv_norwegian_filter', () => {
  it('keeps what meets the rules and forwards a dropped marker, without the body, for the rest', async () => {
    expect((await run(convFilter, norwegian))[0]?.payload).toEqual(norwegian);
    const cases: Array<[Record<string, unknown>, string, Partial<AdapterContext>?]> = [
      [{ min_turns: 3 }, 'min_turns'],
      [{ required_roles: ['agent'] }, 'required_role:agent'],
      [{ started_after: '2025-04-01T00:00:00Z' }, 'started_after'],
      [{ started_before: '2025-02-01T00:00:00Z' }, 'started_before'],
      [{ include_keywords: ['faktura'] }, 'include_keywords'],
      [{ exclude_keywords: ['passordet'] }, 'exclude_keywords'],
      [
        { drop_tiers: ['confidential'] },
        'sensitivity:confidential',
        { metadata: { sensitivity: { tier: 'confidential' } } },
      ],
      [{}, 'quarantined', { metadata: { quarantine: { flagged: true } } }],
    ];
    for (const [config, reason, context] of cases) {
      const [output] = await run(convFilter, norwegian, config, context);
      expect(output?.payload, reason).toEqual({
        ...norwegian,
        conversation: undefined,
        dropped: true,
        reason,
      });
    }
    expect(
      (await run(convFilter, norwegian, { include_keywords: ['Glemt passord'] }))[0]?.payload.dropped,
    ).toBe(false);
    // A marker passes any later filter untouched.
    const marker = {
      package_id: 'p',
      package_total: 3,
      conversation_id: 'c1',
      dropped: true,
      reason: 'min_turns',
    };
    expect((await run(convNorwegianFilter, marker))[0]?.payload).toEqual(marker);
  });

  it('keeps Norwegian, drops Danish with its language, and leaves one-liners undetermined', async () => {
    const [kept] = await run(convNorwegianFilter, norwegian);
    expect(kept?.payload).toMatchObject({
      dropped: false,
      language: { verdict: 'norwegian', language: 'no' },
    });
    const danish = message([
      {
        role: 'user',
        text: 'Hej, jeg har glemt min adgangskode og kan ikke logge ind på min konto. Kan I hjælpe mig?',
      },
      {
        role: 'assistant',
        text: 'Gå til login-siden og vælg "Glemt adgangskode", så sender vi dig et link.',
      },
    ]);
    const [dropped] = await run(convNorwegianFilter, danish);
    expect(dropped?.payload).toMatchObject({
      dropped: true,
      reason: 'language:da',
      language: { verdict: 'other', language: 'da' },
    });
    expect(dropped?.payload).not.toHaveProperty('conversation');
    const short = message([{ role: 'user', text: 'ok takk' }]);
    expect((await run(convNorwegianFilter, short))[0]?.payload).toMatchObject({
      dropped: true,
      reason: 'language:undetermined',
    });
    expect((await run(convNorwegianFilter, short, { keep_undetermined: true }))[0]?.payload).toMatchObject({
      dropped: false,
    });
  });
});

describe('conv_filtered_collector', () => {
  it('emits the package once, when the last conversation arrives, kept or dropped, redeliveries counted once', async () => {
    const fanIn = memoryFanIn();
    const arrive = (payload: Record<string, unknown>) => run(convFilteredCollector, payload, {}, { fanIn });
    const base = { package_id: 'p', package_total: 3 };
    expect(
      await arrive({ ...base, conversation_id: 'b', storage_key: 'k', line: 1, dropped: false }),
    ).toEqual([]);
    expect(
      await arrive({ ...base, conversation_id: 'b', storage_key: 'k', line: 1, dropped: false }),
    ).toEqual([]);
    expect(await arrive({ ...base, conversation_id: 'c', dropped: true, reason: 'language:da' })).toEqual([]);
    const [aggregate] = await arrive({
      ...base,
      conversation_id: 'a',
      storage_key: 'k',
      line: 0,
      dropped: false,
    });
    expect(aggregate?.payload).toEqual({
      package_id: 'p',
      package_total: 3,
      kept_count: 2,
      dropped_count: 1,
      dropped_by_reason: { 'language:da': 1 },
      kept: [
        { conversation_id: 'a', storage_key: 'k', line: 0 },
        { conversation_id: 'b', storage_key: 'k', line: 1 },
      ],
    });
    expect(await arrive({ ...base, conversation_id: 'c', dropped: true, reason: 'language:da' })).toEqual([]);
  });
});

describe('conv_catalog', () => {
  const members = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, index) => ({
      conversation_id: `${prefix}-${index}`,
      storage_key: '',
      line: index,
    }));

  async function storedClusters() {
    const passwords = Array.from({ length: 6 }, (_, index) =>
      JSON.stringify({
        ...compactConversation({
          conversation_id: `pw-${index}`,
          source_format: 'jsonl',
          started_at: `2025-0${1 + (index % 2)}-10T10:00:00.000Z`,
          turns: [
            {
              role: 'user',
              text: `Jeg har glemt passordet, sak ${1000 + index}. Hvordan tilbakestiller jeg passordet?`,
            },
          ],
        }),
      }),
    );
    const other = ['Skriveren virker ikke', 'Skriveren sier papirstopp'].map((text, index) =>
      JSON.stringify(
        compactConversation({
          conversation_id: `pr-${index}`,
          source_format: 'jsonl',
          turns: [{ role: 'user', text }],
        }),
      ),
    );
    const key = (await kit.storage.put('clusters.jsonl', [...passwords, ...other].join('\n'))).key;
    return {
      package_id: 'p',
      clusters: [
        {
          cluster_id: 'cluster-pw',
          members: members('pw', 6).map((member, index) => ({
            ...member,
            storage_key: key,
            started_at: `2025-0${1 + (index % 2)}-10T10:00:00.000Z`,
          })),
        },
        {
          cluster_id: 'cluster-pr',
          members: members('pr', 2).map((member, index) => ({
            ...member,
            storage_key: key,
            line: 6 + index,
          })),
        },
      ],
      noise: [],
    };
  }

  it('publishes clusters of at least min_cluster_size with c-TF-IDF keywords and a trend, and counts the rest', async () => {
    const [output] = await run(convCatalog, await storedClusters(), { min_cluster_size: 5 });
    expect(output?.payload).toMatchObject({
      conversation_count: 8,
      published_count: 6,
      unpublished: { clusters: 1, conversations: 2 },
      labelled_by: 'c-tf-idf',
      topics: [
        {
          cluster_id: 'cluster-pw',
          size: 6,
          share: 1,
          representatives: ['pw-0', 'pw-1', 'pw-2'],
          trend: [
            { period: '2025-01', count: 3 },
            { period: '2025-02', count: 3 },
          ],
        },
      ],
    });
    const topic = (output?.payload.topics as Array<{ label: string; keywords: Array<{ term: string }> }>)[0];
    expect(topic?.keywords.map((keyword) => keyword.term)).toContain('passordet');
    // A ticket number only one conversation has never becomes a keyword.
    expect(topic?.keywords.map((keyword) => keyword.term).join(' ')).not.toMatch(/\d/);
  });

  it('names topics with an LLM profile, and refuses an answer that is not the JSON asked for', async () => {
    llm.answer = '{"name": "Glemt passord", "description": "Brukere som vil tilbakestille passordet."}';
    const [output] = await run(convCatalog, await storedClusters(), { llm_profile: 'namer' });
    expect(output?.payload).toMatchObject({
      labelled_by: 'llm',
      topics: [
        {
          label: 'Glemt passord',
          name: 'Glemt passord',
          description: 'Brukere som vil tilbakestille passordet.',
        },
      ],
    });
    expect(llm.requests.at(-1)?.body.messages[1]?.content).toMatch(/Keywords: .*passordet/);
    llm.answer = '{"name": "Glemt passord", "description": "Som kari@example.no skrev."}';
    const [leaky] = await run(convCatalog, await storedClusters(), { llm_profile: 'namer' });
    expect((leaky?.payload.topics as Array<{ description: string }>)[0]?.description).toBe(
      'Som [REDACTED:email] skrev.',
    );
    llm.answer = 'The topic is passwords.';
    await expect(run(convCatalog, await storedClusters(), { llm_profile: 'namer' })).rejects.toThrow(
      /conv_catalog: the model did not answer with JSON/,
    );
    expect(() =>
      convCatalog.create(Value.Default(convCatalog.config, { llm_profile: 'nope' }) as never, kit.resources),
    ).toThrow(/llm profile "nope" is not configured/);
  });
});

describe('the report writers', () => {
  const catalog = {
    package_id: 'p1',
    conversation_count: 3,
    published_count: 2,
    unpublished: { clusters: 0, conversations: 1 },
    labelled_by: 'c-tf-idf',
    topics: [
      {
        cluster_id: 'c0',
        label: 'faktura',
        keywords: [{ term: 'faktura', weight: 1 }],
        size: 2,
        share: 0.667,
        representatives: ['a'],
        trend: [{ period: '2024-01', count: 2 }],
        members: [{ conversation_id: 'a' }, { conversation_id: 'b' }],
      },
    ],
  };

  it('stores the catalogue without its member lists, with a report, and passes the input on', async () => {
    const [output] = await run(convCatalogWriter, catalog);
    const keys = output?.payload.report_keys as { json: string; markdown?: string };
    const stored = JSON.parse((await kit.resources.storage.get(keys.json)).toString('utf8'));
    expect(stored.topics[0].members).toBeUndefined();
    expect(stored.topics[0].label).toBe('faktura');
    expect((await kit.resources.storage.get(keys.markdown as string)).toString('utf8')).toContain(
      '## faktura',
    );
    expect(output?.payload.topics).toEqual(catalog.topics);
  });

  it('writes no report with markdown off', async () => {
    const [output] = await run(convCatalogWriter, catalog, { markdown: false });
    expect(output?.payload.report_keys).toEqual({ json: expect.stringMatching(/catalog\/p1\.json$/) });
  });
});
