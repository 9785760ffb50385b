/**
 * One run over two exports of the same help desk: a ChatGPT data export (4 conversations) and
 * a Slack export (3 threads), both answering "my password expired, VPN refuses me" with the
 * same four steps. Fixtures: test/fixtures/exports/chatgpt-export and slack-helpdesk.
 */
import path from 'node:path';
import { Value } from 'typebox/value';
import { afterAll, describe, expect, it } from 'vitest';
import { compactConversation } from '../../conversations/compact.js';
import { detectFormat, readPackage } from '../../conversations/formats/read-package.js';
import { clusterKeywords } from '../../conversations/keywords.js';
import { defaultParseLimits } from '../../conversations/model.js';
import { localPackageFiles } from '../../conversations/packages.js';
import type { AdapterContext, AdapterDefinition } from '../adapter.js';
import { collectOutputs, createAdapterTestKit, memorySyncState } from '../adapter-testing.js';
import { convRoutineDiscovery } from './conv-routine-discovery.js';
import { convRoutineIndexer } from './conv-routine-indexer.js';
import { convRoutineRenderer } from './conv-routine-renderer.js';
import { convRoutineWriter } from './conv-routine-writer.js';

const kit = await createAdapterTestKit();
afterAll(() => kit.close());

async function run(
  adapter: AdapterDefinition,
  payload: Record<string, unknown>,
  context: Partial<AdapterContext>,
) {
  const handler = adapter.create(Value.Default(adapter.config, {}) as never, kit.resources);
  return collectOutputs(await handler(payload, kit.context(context)));
}

/** The package read and compacted, stored as conv_storage_writer does, as one catalogue topic. */
async function packageTopic(location: string, packageId: string) {
  const files = await localPackageFiles(path.resolve('test/fixtures/exports', location));
  const format = await detectFormat(files);
  const conversations = [];
  for await (const item of readPackage(format, files, defaultParseLimits))
    if ('conversation' in item) conversations.push(compactConversation(item.conversation));
  const key = (
    await kit.storage.put(`${packageId}.jsonl`, conversations.map((c) => JSON.stringify(c)).join('\n'))
  ).key;
  return {
    texts: conversations.map((conversation) => conversation.text),
    payload: {
      package_id: packageId,
      topics: [
        {
          cluster_id: `${packageId}-0`,
          label: 'passord, vpn, nytt',
          members: conversations.map((conversation, line) => ({
            conversation_id: conversation.conversation_id,
            storage_key: key,
            line,
          })),
        },
      ],
    },
  };
}

describe('a routine found in two packages of one run', () => {
  it('gets one id and one page that counts and cites every conversation of both, under a title made of its steps', async () => {
    const syncState = memorySyncState();
    const context = { syncState, executionId: '00000000-0000-7000-8000-00000000aaaa' };
    const written = new Map<string, string>();
    const ids: string[] = [];
    for (const [location, packageId] of [
      ['chatgpt-export', 'chatgpt-pkg'],
      ['slack-helpdesk', 'slack-pkg'],
    ] as const) {
      const { payload } = await packageTopic(location, packageId);
      const [discovered] = await run(convRoutineDiscovery, payload, context);
      const [indexed] = await run(convRoutineIndexer, discovered?.payload ?? {}, context);
      for (const rendered of await run(convRoutineRenderer, indexed?.payload ?? {}, context)) {
        const [stored] = await run(convRoutineWriter, rendered.payload, {
          ...context,
          metadata: rendered.metadata,
        });
        const key = stored?.payload.storage_key as string;
        written.set(key, (await kit.storage.get(key)).toString('utf8'));
        ids.push(rendered.payload.routine_id as string);
      }
    }
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(1);
    expect(written.size).toBe(1);
    const page = [...written.values()][0] ?? '';
    expect(page).toContain('Followed in 7 conversations');
    expect(page).toMatch(/conversations: 7\n/);
    expect(page).toMatch(
      /- Package chatgpt-pkg, 4 conversations: `6630.*`\n- Package slack-pkg, 3 conversations: `slack:helpdesk:thread:1714989600\.000100`/,
    );
    expect(page).toMatch(
      /^# Gå til passord\.firma\.no og velg Glemt passord … Logg inn i VPN-klienten med det nye passordet$/m,
    );
    // Each step counts the conversations of both packages.
    expect(page).toMatch(/## Steps\n\n1\. Gå til passord\.firma\.no/);
  });

  it('keeps common verbs ("får") and words like "nytt" out of the catalogue keywords', async () => {
    const chatgpt = await packageTopic('chatgpt-export', 'k1');
    const slack = await packageTopic('slack-helpdesk', 'k2');
    const teams = await packageTopic('teams-mfa/messages.json', 'k3');
    const keywords = clusterKeywords([[...chatgpt.texts, ...slack.texts], teams.texts], {
      top: 8,
      minDocuments: 2,
    });
    const terms = keywords.flatMap((cluster) => cluster.map((keyword) => keyword.term));
    for (const common of ['får', 'nytt', 'velg', 'eller', 'gamle', 'legg'])
      expect(terms).not.toContain(common);
    expect(keywords[0]?.slice(0, 3).map((keyword) => keyword.term)).toEqual(['passord', 'passordet', 'vpn']);
  });
});
