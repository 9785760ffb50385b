/**
 * The engine's bound on lineage depth (max_lineage_depth): a cycle of routes ends at the first
 * message past it. Its own engine, since the bound is a setting (engine.test.ts has the rest).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineCombinations } from './helpers/brokers.js';
import { createTestEngine, type TestEngine, waitForStatus } from './helpers/engine.js';

const combinations = await engineCombinations();

describe.each(combinations)('lineage depth bound on $name', ({ database: target, broker: brokerTarget }) => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await createTestEngine(target, {
      broker: await brokerTarget.open(),
      settings: { max_lineage_depth: 5 },
    });
  });
  afterAll(async () => {
    await engine?.close();
  });

  it('fails the first message past max_lineage_depth, so a cycle of routes ends', async () => {
    const config = await engine.configs.create({
      config_yaml: `
routes:
  - id: ping
    adapters: [{ type: synthetic_fanout, config: { count: 1 }, destination: pong }]
  - id: pong
    adapters: [{ type: synthetic_fanout, config: { count: 1 }, destination: ping }]
`,
    });
    expect(config.validation_report.findings.map((finding) => finding.code)).toEqual(['W506']);
    const execution = await engine.orchestrator.run(config.id);
    await waitForStatus(engine.repository, execution.id, 'completed', 30_000);
    const statistics = await engine.repository.statistics(execution.id);
    // Depths 0 to 5 ran; the message at depth 6 failed without running.
    expect(statistics).toMatchObject({ total_messages: 7, completed_messages: 6, failed_messages: 1 });
    expect(statistics.first_errors[0]?.error).toMatch(/^lineage depth 6 passes max_lineage_depth \(5\)/);
  });
});
