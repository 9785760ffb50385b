import { Value } from 'typebox/value';
import { afterAll, describe, expect, it } from 'vitest';
import { generateConversations } from '../../../test/helpers/conversation-fixtures.js';
import { startLlmServer } from '../../../test/helpers/llm-server.js';
import { compactConversation } from '../../conversations/compact.js';
import type { AdapterContext, AdapterDefinition } from '../adapter.js';
import { collectOutputs, createAdapterTestKit, memorySyncState } from '../adapter-testing.js';
import { convRoutineDiscovery } from './conv-routine-discovery.js';
import { convRoutineIndexer } from './conv-routine-indexer.js';
import { convRoutineRenderer } from './conv-routine-renderer.js';
import { convRoutineWriter } from './conv-routine-writer.js';

const llm = await startLlmServer();
const kit = await createAdapterTestKit({
  settings: {
    llm_profiles: [
      { name: 'writer', provider: 'openai', base_url: llm.baseUrl, model: 'm', timeout_ms: 60_000 },
    ],
  },
});
afterAll(async () => {
  await kit.close();
  await llm.close();
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

/** A catalogue topic over the fixture's Bokmål password-reset conversations, stored as conv_storage_writer does. */
async function passwordTopic() {
  const conversations = generateConversations({ seed: 9, count: 200, languages: { nb: 1 } })
    .filter(
      (conversation) => conversation.truth.topic === 'password-reset' && !conversation.truth.duplicate_of,
    )
    .map((conversation) => compactConversation({ ...conversation, source_format: 'jsonl' }));
  const key = (
    await kit.storage.put(
      'topic.jsonl',
      conversations.map((conversation) => JSON.stringify(conversation)).join('\n'),
    )
  ).key;
  return {
    package_id: 'p',
    topics: [
      {
        cluster_id: 'cluster-pw',
        label: 'passord, glemt, innloggingssiden',
        members: conversations.map((conversation, line) => ({
          conversation_id: conversation.conversation_id,
          storage_key: key,
          line,
        })),
      },
    ],
  };
}

describe('routines', () => {
  it('discovers a routine offline, indexes it with an id that survives a re-run, renders and stores it', async () => {
    const [discovered] = await run(convRoutineDiscovery, await passwordTopic());
    const routine = (discovered?.payload.routines as Array<Record<string, unknown>>)[0];
    expect(routine).toMatchObject({
      cluster_id: 'cluster-pw',
      method: 'sequences',
      // Readable offline: the first and the last step, not a keyword list.
      title: 'Gå til innloggingssiden og velg «Glemt passord» … Lag et nytt passord med minst tolv tegn',
    });
    expect((routine?.steps as unknown[]).length).toBe(4);

    const syncState = memorySyncState();
    const [indexed] = await run(convRoutineIndexer, discovered?.payload ?? {}, {}, { syncState });
    const first = (indexed?.payload.routines as Array<{ routine_id: string; known: boolean }>)[0];
    expect(first?.known).toBe(false);
    // Next run: one step phrased differently; still the same routine, same id.
    const changed = structuredClone(discovered?.payload ?? {}) as {
      routines: Array<{ steps: Array<{ text: string }> }>;
    };
    (changed.routines[0]?.steps[3] as { text: string }).text =
      'Velg et nytt og sterkt passord på minst tolv tegn.';
    const [again] = await run(convRoutineIndexer, changed, {}, { syncState });
    expect((again?.payload.routines as Array<{ routine_id: string; known: boolean }>)[0]).toMatchObject({
      routine_id: first?.routine_id,
      known: true,
    });

    const [rendered] = await run(convRoutineRenderer, indexed?.payload ?? {});
    expect(rendered?.metadata).toMatchObject({
      document: { source_key: `routine:${first?.routine_id}`, language: 'norwegian' },
    });
    expect(rendered?.payload.markdown).toMatch(
      /^# Gå til innloggingssiden.*\n\n## Before you start\n\n- Du må ha tilgang/s,
    );
    expect(rendered?.payload.markdown).toMatch(/## Steps\n\n1\. .*«Glemt passord»/);
    // The conversations it was found in are cited by id.
    expect(rendered?.payload.markdown).toMatch(/## Sources\n\n- Package p, \d+ conversations: `conv-9-/);
    const leaky = structuredClone(indexed?.payload ?? {}) as { routines: Array<{ preconditions: string[] }> };
    leaky.routines[0]?.preconditions.push('Ring 01010750160 eller skriv til ola@example.no');
    const [redacted] = await run(convRoutineRenderer, leaky);
    expect(redacted?.payload.markdown).toContain(
      '- Ring [REDACTED:national_id_no] eller skriv til [REDACTED:email]',
    );
    const [written] = await run(
      convRoutineWriter,
      rendered?.payload ?? {},
      {},
      { metadata: rendered?.metadata ?? {} },
    );
    const stored = (await kit.storage.get(written?.payload.storage_key as string)).toString('utf8');
    expect(stored).toMatch(new RegExp(`^---\\nroutine_id: ${first?.routine_id}\\ntitle: `));
    expect(written?.metadata).toMatchObject({ document: { storage_key: written?.payload.storage_key } });
  });

  it('merges near-identical routines of two clusters into one', async () => {
    const steps = [
      'Åpne innloggingssiden',
      'Skriv inn e-postadressen',
      'Klikk på lenken i e-posten',
      'Velg et nytt passord',
    ];
    const routine = (cluster: string, texts: string[], ids: string[]) => ({
      cluster_id: cluster,
      topic: 't',
      title: 'Routine: t',
      steps: texts.map((text) => ({ text, support: ids.length })),
      preconditions: [],
      outcome: null,
      conversation_ids: ids,
      method: 'sequences',
    });
    const [output] = await run(
      convRoutineIndexer,
      {
        package_id: 'p',
        routines: [
          routine('c1', steps, ['a', 'b', 'c']),
          routine('c2', [...steps.slice(0, 3), 'Velg et nytt passord nå'], ['d', 'e']),
          routine('c3', ['Installer VPN-klienten', 'Logg inn med jobbkontoen'], ['f', 'g', 'h']),
        ],
      },
      {},
      { syncState: memorySyncState() },
    );
    const routines = output?.payload.routines as Array<{ merged_from: string[]; conversation_ids: string[] }>;
    expect(routines.map((merged) => merged.merged_from)).toEqual([['c1', 'c2'], ['c3']]);
    expect(routines[0]?.conversation_ids).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('has the routine written by an LLM profile, validated', async () => {
    llm.answer = JSON.stringify({
      title: 'Slik tilbakestiller du passordet',
      preconditions: ['Tilgang til e-posten på kontoen'],
      steps: ['Klikk «Glemt passord»', 'Skriv inn e-postadressen', 'Åpne lenken', 'Velg nytt passord'],
      outcome: 'Du kan logge inn igjen',
    });
    const [output] = await run(convRoutineDiscovery, await passwordTopic(), { llm_profile: 'writer' });
    expect((output?.payload.routines as unknown[])[0]).toMatchObject({
      method: 'llm',
      title: 'Slik tilbakestiller du passordet',
      steps: [{ text: 'Klikk «Glemt passord»' }, {}, {}, {}],
      outcome: 'Du kan logge inn igjen',
    });
    expect(llm.requests.at(-1)?.body.messages[1]?.content).toMatch(
      /Steps found in the conversations: \[".*Glemt passord/,
    );
    llm.answer = JSON.stringify({ title: 'x', preconditions: [], steps: ['only one'], outcome: null });
    await expect(run(convRoutineDiscovery, await passwordTopic(), { llm_profile: 'writer' })).rejects.toThrow(
      /needs a "title", 2 to 20 "steps"/,
    );
  });
});
