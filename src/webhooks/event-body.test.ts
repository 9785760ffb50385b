import { describe, expect, it } from 'vitest';
import { eventBody, testEventBody } from './event-body.js';

describe('execution event bodies', () => {
  it('carry the outcome and its first errors in data', () => {
    const first_errors = [
      {
        message_id: 'm',
        route_id: 'sink',
        stage: 'synthetic_sink',
        status: 'failed' as const,
        error: 'boom',
      },
    ];
    const body = eventBody(
      {
        type: 'execution.completed',
        execution_id: 'e',
        config_id: 'c',
        status: 'completed',
        timestamp: '2026-11-26T00:00:00.000Z',
        error: null,
        outcome: 'partial',
        first_errors,
      },
      'id',
    );
    expect(body.data).toEqual({
      execution_id: 'e',
      config_id: 'c',
      status: 'completed',
      error: null,
      outcome: 'partial',
      first_errors,
    });
  });

  it('of the test operation have the real shape: an outcome once ended, none while running', () => {
    const now = new Date('2026-11-26T00:00:00Z');
    expect(testEventBody('execution.completed', 'id', now, {}).data).toMatchObject({
      status: 'completed',
      outcome: 'succeeded',
      first_errors: [],
    });
    expect(testEventBody('execution.failed', 'id', now, {}).data).toMatchObject({ outcome: 'failed' });
    expect(testEventBody('execution.started', 'id', now, {}).data).toMatchObject({
      status: 'running',
      outcome: null,
      first_errors: [],
    });
  });
});
