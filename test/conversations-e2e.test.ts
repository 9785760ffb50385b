/**
 * Conversation processing and routines end to end, on every broker and database: a Slack
 * export and a ChatGPT export on a share go through the 18 conv_ adapters (with pii_redactor
 * before anything is stored) into a topic catalogue and routines, the routines through
 * smart_segmenter -> embedding_generator into search. A second run of the same exports
 * changes nothing: same catalogue ids, same routine ids, no new documents.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSearchService } from '../src/search/search-service.js';
import { itWhere } from './helpers/applies.js';
import { engineCombinations } from './helpers/brokers.js';
import { toChatGpt, toJsonl, toSlack } from './helpers/conversation-exports.js';
import { generateConversations } from './helpers/conversation-fixtures.js';
import { createTestEngine, runToStatus, type TestEngine } from './helpers/engine.js';

const pipeline = (root: string) => `
init_message:
  route: packages
  payload: {}
routes:
  - id: packages
    adapters:
      - type: conv_enumerator
        config: { root: "${root}" }
      - type: conv_batch_processor
        config: { batch_size: 40 }
      - type: conv_compact
      - type: pii_redactor
        config: { fields: ["conversations[].text", "conversations[].turns[].text", "conversations[].title"] }
      - type: conv_storage_writer
      - type: conv_stored_keys_fanout
        destination: conversations
  - id: conversations
    adapters:
      - type: conv_filter
        concurrency: 4
      - type: conv_norwegian_filter
        concurrency: 4
      - type: conv_filtered_collector
        concurrency: 8
      - type: conv_deduplicate
      - type: conv_deduplicate_writer
      - type: conv_clustering
      - type: conv_clustering_writer
      - type: conv_catalog
        config: { min_cluster_size: 8 }
      - type: conv_catalog_writer
      - type: conv_routine_discovery
      - type: conv_routine_indexer
      - type: conv_routine_renderer
        destination: routines
  - id: routines
    adapters:
      - type: conv_routine_writer
      - type: smart_segmenter
      - type: segment_publisher
        destination: embed
  - id: embed
    adapters:
      - type: embedding_generator
`;

for (const { name, database, broker } of await engineCombinations()) {
  describe(`conversations to catalogue and routines on ${name}`, () => {
    let engine: TestEngine;
    let directory: string;
    const slack = generateConversations({
      seed: 21,
      count: 120,
      languages: { nb: 0.6, nn: 0.2, da: 0.1, sv: 0.1 },
    });
    const chatgpt = generateConversations({
      seed: 22,
      count: 120,
      languages: { nb: 0.5, nn: 0.2, en: 0.2, da: 0.1 },
    });

    beforeAll(async () => {
      directory = await mkdtemp(path.join(tmpdir(), 'weir-conv-e2e-'));
      for (const [file, body] of toSlack(slack)) {
        await mkdir(path.dirname(path.join(directory, 'slack', file)), { recursive: true });
        await writeFile(path.join(directory, 'slack', file), body);
      }
      await writeFile(path.join(directory, 'conversations.json'), toChatGpt(chatgpt));
      engine = await createTestEngine(database, {
        broker: await broker.open(),
        settings: { fileshare_roots: [directory] },
      });
    });
    afterAll(async () => {
      await engine?.close();
      await rm(directory, { recursive: true, force: true });
    });

    async function stored(executionId: string, stage: string, suffix: string) {
      const listed = await engine.storage.list({ prefix: `${executionId}/${stage}/` });
      const objects = listed.objects.filter((object) => object.key.endsWith(suffix));
      return Promise.all(
        objects.map(async (object) => ({
          key: object.key,
          body: (await engine.storage.get(object.key)).toString('utf8'),
        })),
      );
    }

    it('turns two exports into a catalogue and searchable routines, and a second run changes nothing', async () => {
      const config = await engine.configs.create({ config_yaml: pipeline(directory) });
      const lineage = await runToStatus(engine, config.id, 'completed');
      const executionId = lineage[0]?.execution_id as string;
      const rows = async (filter: { status?: 'failed' | 'completed'; stage?: string }, id = executionId) =>
        (await engine.repository.lineage({ execution_id: id, limit: 1000, offset: 0, ...filter })).messages;
      expect((await rows({ status: 'failed' })).map((row) => [row.stage, row.error])).toEqual([]);

      // Every conversation reached the collector, kept or dropped; each package completed once.
      const collected = await rows({ stage: 'conv_filtered_collector', status: 'completed' });
      expect(collected.length).toBe(slack.length + chatgpt.length);
      expect(await rows({ stage: 'conv_deduplicate', status: 'completed' })).toHaveLength(2);
      const catalogs = await stored(executionId, 'conv_catalog_writer', '.json');
      expect(catalogs).toHaveLength(2);
      for (const { body } of catalogs) {
        const catalog = JSON.parse(body);
        expect(catalog.topics.length).toBeGreaterThanOrEqual(3);
        for (const topic of catalog.topics) {
          expect(topic.size).toBeGreaterThanOrEqual(8);
          expect(topic).not.toHaveProperty('members');
        }
        // Nothing personal in the catalogue: no e-mail, no national id, no ticket number as a keyword.
        expect(body).not.toMatch(/@example\.no|01010750160/);
      }
      const reports = await stored(executionId, 'conv_catalog_writer', '.md');
      expect(reports[0]?.body).toMatch(/^# Topics of package/);
      expect((await stored(executionId, 'conv_deduplicate_writer', '.json')).length).toBe(2);
      expect((await stored(executionId, 'conv_clustering_writer', '.json')).length).toBe(2);

      // pii_redactor ran before the conversations were stored.
      const conversations = await stored(executionId, 'conv_storage_writer', '.jsonl');
      const text = conversations.map((object) => object.body).join('\n');
      expect(text).toContain('[REDACTED:');
      expect(text).not.toMatch(/kari\.nordmann\d+@example\.no|01010750160/);

      // Routines: stored as markdown with front matter, and found by search.
      const routines = await stored(executionId, 'conv_routine_writer', '.md');
      expect(routines.length).toBeGreaterThanOrEqual(3);
      const password = routines.find((routine) => /Glemt passord/.test(routine.body));
      expect(password?.body).toMatch(/^---\nroutine_id: routine-[0-9a-f]{12}\n/);
      expect(password?.body).toMatch(/## Steps\n\n1\. .*«Glemt passord»/);
      const search = createSearchService({ db: engine.database.db, embedders: undefined });
      const hit = (await search.search('keyword', { query: 'glemt passord innloggingssiden', limit: 3 }))
        .results[0];
      // Titled by its first and last step (issue 33), not by the topic's keywords.
      expect(hit?.source.title).toMatch(/innloggingssiden.* … /);
      expect(hit?.text).toMatch(/Glemt passord/);

      const documents = async () =>
        (await engine.database.db.selectFrom('knowledge_documents').select('source_key').execute())
          .map((row) => row.source_key)
          .sort();
      const before = await documents();
      expect(before.length).toBeGreaterThan(0);
      expect(before.every((key) => key.startsWith('routine:'))).toBe(true);
      const ids = (bodies: Array<{ body: string }>) =>
        bodies
          .flatMap(({ body }) =>
            JSON.parse(body).topics.map((topic: { cluster_id: string }) => topic.cluster_id),
          )
          .sort();

      const again = await runToStatus(engine, config.id, 'completed');
      const againId = again[0]?.execution_id as string;
      expect(await rows({ status: 'failed' }, againId)).toEqual([]);
      expect(ids(await stored(againId, 'conv_catalog_writer', '.json'))).toEqual(ids(catalogs));
      const routineIds = async (executionIdOf: string) =>
        (await stored(executionIdOf, 'conv_routine_writer', '.md'))
          .map((routine) => routine.key.split('/').at(-1))
          .sort();
      expect(await routineIds(againId)).toEqual(await routineIds(executionId));
      expect(await documents()).toEqual(before);
    }, 180_000);

    itWhere(name === 'pglite + memory')(
      'fails a broken export as its own message, with what broke, and goes on with the others',
      async () => {
        const broken = await mkdtemp(path.join(directory, 'broken-'));
        await writeFile(
          path.join(broken, 'conversations.json'),
          toChatGpt(chatgpt.slice(0, 20)).slice(0, 5000),
        );
        const lines = toJsonl(slack.slice(0, 30)).split('\n');
        lines.splice(3, 0, '{"conversation_id": "cut', '\u00ff');
        await writeFile(path.join(broken, 'support.jsonl'), lines.join('\n'));
        const config = await engine.configs.create({ config_yaml: pipeline(broken) });
        const lineage = await runToStatus(engine, config.id, 'completed');
        const executionId = lineage[0]?.execution_id as string;
        const failed = (
          await engine.repository.lineage({
            execution_id: executionId,
            status: 'failed',
            limit: 10,
            offset: 0,
          })
        ).messages;
        expect(failed.map((row) => [row.stage, row.error])).toEqual([
          [
            'conv_batch_processor',
            expect.stringMatching(
              /conversations\.json is not a valid ChatGPT export after \d+ conversations \(truncated or corrupt JSON\)/,
            ),
          ],
        ]);
        // The JSONL export went through: its two bad lines rejected, its catalogue written.
        const batches = (
          await engine.repository.lineage({
            execution_id: executionId,
            stage: 'conv_compact',
            limit: 10,
            offset: 0,
          })
        ).messages;
        expect(batches.length).toBeGreaterThan(0);
        expect((await stored(executionId, 'conv_catalog_writer', '.json')).length).toBe(1);
      },
      120_000,
    );
  });
}
