/**
 * The conversation adapters on exports in the products' own formats
 * (test/fixtures/exports): what a package message says about the files it did not read, and
 * what each per-conversation message carries.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Value } from 'typebox/value';
import { afterAll, describe, expect, it } from 'vitest';
import { compactConversation } from '../../conversations/compact.js';
import type { AdapterDefinition } from '../adapter.js';
import { collectOutputs, createAdapterTestKit } from '../adapter-testing.js';
import { convBatchProcessor } from './conv-batch-processor.js';
import { convEnumerator } from './conv-enumerator.js';
import { convStoredKeysFanout } from './conv-stored-keys-fanout.js';

const root = await mkdtemp(path.join(tmpdir(), 'weir-conv-exports-'));
const kit = await createAdapterTestKit({ settings: { fileshare_roots: [root] } });
afterAll(async () => {
  await kit.close();
  await rm(root, { recursive: true, force: true });
});

async function run(adapter: AdapterDefinition, payload: Record<string, unknown>, config = {}) {
  const handler = adapter.create(
    Value.Default(adapter.config, structuredClone(config)) as never,
    kit.resources,
  );
  return collectOutputs(await handler(payload, kit.context()));
}

describe('conversation adapters on real export layouts', () => {
  it('enumerates an unzipped ChatGPT export and a ZIP as packages, and the batch names what it ignored and why', async () => {
    await cp(path.resolve('test/fixtures/exports/chatgpt-export'), path.join(root, 'chatgpt-unzipped'), {
      recursive: true,
    });
    await cp(path.resolve('test/fixtures/exports/zips/chatgpt-export.zip'), path.join(root, 'chatgpt.zip'));
    const packages = await run(convEnumerator, { root });
    expect(packages.map((found) => found.payload.path)).toEqual(['chatgpt-unzipped', 'chatgpt.zip']);
    for (const found of packages) {
      const [batch] = await run(convBatchProcessor, found.payload);
      expect(batch?.payload).toMatchObject({ format: 'chatgpt', package_total: 4, rejected: [] });
      expect(batch?.payload.ignored).toContainEqual({
        path: 'message_feedback.json',
        reason: 'thumbs-up/down ratings of answers, not conversations',
      });
      expect((batch?.payload.ignored as unknown[]).length).toBe(6);
    }
  });

  it('fans stored conversations out without their turns, as its schema and description say', async () => {
    const compact = compactConversation({
      conversation_id: 'c1',
      source_format: 'jsonl',
      turns: [
        { role: 'user', text: 'Passordet mitt er utløpt' },
        { role: 'assistant', text: '1. Gå til passord.firma.no' },
      ],
    });
    const key = (await kit.storage.put('batch.jsonl', `${JSON.stringify(compact)}\n`)).key;
    const [message] = await run(convStoredKeysFanout, {
      package_id: 'p',
      package_total: 1,
      storage_key: key,
    });
    const conversation = message?.payload.conversation as Record<string, unknown>;
    expect(conversation).not.toHaveProperty('turns');
    expect(conversation.text).toBe('user: Passordet mitt er utløpt\nassistant: 1. Gå til passord.firma.no');
    expect(conversation.turn_count).toBe(2);
  });
});
