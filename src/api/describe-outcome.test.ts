import { describe, expect, it } from 'vitest';
import { describeOutcome, needsAttention } from './describe-outcome.js';

describe('describeOutcome', () => {
  it('puts the outcome before the status, with the first error or reason', () => {
    const partial = {
      status: 'completed',
      outcome: 'partial',
      error: null,
      first_errors: [{ route_id: 'sink', stage: 'synthetic_sink', status: 'failed', error: 'boom' }],
    };
    expect(describeOutcome(partial)).toBe(
      'partial: some messages failed or were skipped, the rest reached the end; first: sink/synthetic_sink: boom',
    );
    expect(needsAttention(partial)).toBe(true);
    const empty = {
      status: 'completed',
      outcome: 'empty',
      first_errors: [
        { route_id: 'pages', stage: 'sitemap_parser', status: 'skipped', error: 'x answered 404' },
      ],
    };
    expect(describeOutcome(empty)).toBe(
      'empty: nothing reached the end of the pipeline; first: pages/sitemap_parser: x answered 404',
    );
    expect(needsAttention(empty)).toBe(true);
    expect(describeOutcome({ status: 'completed', outcome: 'succeeded', first_errors: [] })).toBe(
      'succeeded',
    );
    expect(needsAttention({ status: 'completed', outcome: 'succeeded' })).toBe(false);
    expect(
      describeOutcome({ status: 'failed', outcome: 'failed', error: 'over budget', first_errors: [] }),
    ).toBe('failed; over budget');
    expect(describeOutcome({ status: 'cancelled', outcome: 'empty', first_errors: [] })).toBe(
      'cancelled (empty: nothing reached the end of the pipeline)',
    );
    expect(describeOutcome({ status: 'running', outcome: null })).toBe('running');
    // Executions that ended before outcomes were kept: the status alone.
    expect(describeOutcome({ status: 'completed', outcome: null })).toBe('completed');
  });
});
