import { Type } from 'typebox';
import { defineAdapter } from '../adapter.js';
import { ConversationMessage } from './conv-stored-keys-fanout.js';
import { ConversationRef, packageFields, requireCount, requireString } from './shared.js';

const TYPE = 'conv_filtered_collector';

export const PackageAggregate = Type.Object({
  ...packageFields,
  kept_count: Type.Integer({ minimum: 0 }),
  dropped_count: Type.Integer({ minimum: 0 }),
  dropped_by_reason: Type.Record(Type.String(), Type.Integer(), { description: 'reason -> conversations' }),
  kept: Type.Array(ConversationRef, { description: 'the kept conversations, sorted by id' }),
});

export const convFilteredCollector = defineAdapter({
  type: TYPE,
  group: 'conversation',
  summary: 'Fan-in per package: wait for every conversation, kept or dropped, then emit the package once.',
  description:
    'Each input (a conversation that passed the filters, or a `dropped` marker) is recorded as an arrival of its ' +
    "package in the execution's fan-in (migration 0015): once per `conversation_id`, however often the message is " +
    'redelivered, whichever instance gets it. The arrival that brings the count to `package_total` completes the ' +
    'package and emits `{package_id, package_total, kept_count, dropped_count, dropped_by_reason, kept: ' +
    '[{conversation_id, storage_key, line}]}`; every other arrival emits nothing. Only a retry of that completing ' +
    'message emits the aggregate again (the stages after it write by package id, so the result is the same). A package ' +
    'whose conversation messages fail for good never completes: the failures show in lineage.',
  config: Type.Object({}, { additionalProperties: false }),
  input: ConversationMessage,
  output: PackageAggregate,
  create: () => async (payload, context) => {
    const packageId = requireString(payload, 'package_id', TYPE);
    const total = requireCount(payload, 'package_total', TYPE);
    const conversationId = requireString(payload, 'conversation_id', TYPE);
    const dropped = payload.dropped === true;
    const arrivals = await context.fanIn.arrive(
      `conv_package:${packageId}`,
      conversationId,
      dropped
        ? { dropped: true, reason: typeof payload.reason === 'string' ? payload.reason : 'dropped' }
        : {
            dropped: false,
            storage_key: requireString(payload, 'storage_key', TYPE),
            line: requireCount(payload, 'line', TYPE),
          },
      total,
    );
    if (!arrivals) return [];
    const kept = arrivals
      .filter((arrival) => arrival.value.dropped !== true)
      .map((arrival) => ({
        conversation_id: arrival.item,
        storage_key: arrival.value.storage_key,
        line: arrival.value.line,
      }));
    const droppedByReason: Record<string, number> = {};
    for (const arrival of arrivals) {
      if (arrival.value.dropped !== true) continue;
      const reason = String(arrival.value.reason);
      droppedByReason[reason] = (droppedByReason[reason] ?? 0) + 1;
    }
    return [
      {
        payload: {
          package_id: packageId,
          package_total: total,
          kept_count: kept.length,
          dropped_count: arrivals.length - kept.length,
          dropped_by_reason: droppedByReason,
          kept,
        },
      },
    ];
  },
});
