/**
 * What the conversation adapters share: the payload pieces that travel from stage to stage
 * (package identity, a stored conversation's reference), reading stored conversations back by
 * reference, and the *_writer adapters' report writing.
 */
import { createHash } from 'node:crypto';
import { type TSchema, Type } from 'typebox';
import type { CompactConversation } from '../../conversations/compact.js';
import type { ObjectStore } from '../../storage/object-store.js';
import type { AdapterContext, AdapterOutput } from '../adapter.js';

/** The package a message belongs to, and how many conversations the package has. */
export const packageFields = {
  package_id: Type.String({ description: 'stable id of the export (a hash of where it was found)' }),
  package_total: Type.Integer({
    minimum: 0,
    description: 'conversations read from the package (rejected ones not counted)',
  }),
};

/** Where a stored compact conversation is: line `line` (0-based) of the JSONL object `storage_key`. */
export const ConversationRef = Type.Object({
  conversation_id: Type.String(),
  storage_key: Type.String(),
  line: Type.Integer({ minimum: 0 }),
});

export interface ConversationReference {
  conversation_id: string;
  storage_key: string;
  line: number;
}

export const CompactConversationSchema = Type.Object(
  {
    conversation_id: Type.String(),
    source_format: Type.String(),
    title: Type.Optional(Type.String()),
    channel: Type.Optional(Type.String()),
    started_at: Type.Optional(Type.String()),
    ended_at: Type.Optional(Type.String()),
    roles: Type.Array(Type.String()),
    turn_count: Type.Integer(),
    token_count: Type.Integer(),
    content_hash: Type.String(),
    text: Type.String({ description: 'the turns as `role: text` lines' }),
    turns: Type.Array(
      Type.Object({
        role: Type.String(),
        text: Type.String(),
        at: Type.Optional(Type.String()),
        bot: Type.Optional(Type.String()),
      }),
    ),
  },
  { description: 'a compacted conversation (conv_compact)' },
);

/** The compact conversations behind `references`, each stored batch object read once. */
export async function readConversations(
  storage: ObjectStore,
  references: readonly ConversationReference[],
): Promise<CompactConversation[]> {
  const byKey = new Map<string, ConversationReference[]>();
  for (const reference of references)
    byKey.set(reference.storage_key, [...(byKey.get(reference.storage_key) ?? []), reference]);
  const found = new Map<string, CompactConversation>();
  for (const [key, wanted] of byKey) {
    const lines = (await storage.get(key)).toString('utf8').split('\n');
    for (const reference of wanted) {
      const line = lines[reference.line];
      if (line === undefined)
        throw new Error(`${key} has no line ${reference.line} (conversation ${reference.conversation_id})`);
      found.set(reference.conversation_id, JSON.parse(line) as CompactConversation);
    }
  }
  return references.map((reference) => found.get(reference.conversation_id) as CompactConversation);
}

/** The references of a payload field, checked. */
export function referencesOf(value: unknown, field: string, stage: string): ConversationReference[] {
  if (!Array.isArray(value))
    throw new Error(`${stage}: input needs \`${field}\`, an array of {conversation_id, storage_key, line}`);
  return value.map((item) => {
    const reference = item as Partial<ConversationReference>;
    if (
      typeof reference.conversation_id !== 'string' ||
      typeof reference.storage_key !== 'string' ||
      typeof reference.line !== 'number'
    )
      throw new Error(`${stage}: \`${field}\` holds an entry without conversation_id, storage_key and line`);
    return {
      conversation_id: reference.conversation_id,
      storage_key: reference.storage_key,
      line: reference.line,
    };
  });
}

export function requireString(payload: Record<string, unknown>, field: string, stage: string): string {
  const value = payload[field];
  if (typeof value !== 'string' || value === '')
    throw new Error(`${stage}: input needs a \`${field}\` string`);
  return value;
}

export function requireCount(payload: Record<string, unknown>, field: string, stage: string): number {
  const value = payload[field];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new Error(`${stage}: input needs \`${field}\`, a count`);
  return value;
}

/** The routing of a fan-out output: the step's destination when it has one. */
export function routed(context: AdapterContext, payload: Record<string, unknown>): AdapterOutput {
  return { payload, ...(context.destination ? { destination: context.destination } : {}) };
}

export function shortHash(text: string, length = 16): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** Config of the *_writer adapters. */
export const reportWriterConfig = Type.Object(
  {
    markdown: Type.Boolean({
      default: true,
      description: 'also write a readable markdown report beside the JSON',
    }),
  },
  { additionalProperties: false },
);

export const reportKeys = Type.Object({
  json: Type.String({ description: 'storage key of the JSON result' }),
  markdown: Type.Optional(Type.String({ description: 'storage key of the markdown report' })),
});

/**
 * Writes a result as `<name>/<package_id>.json` (and `.md`) under the stage's prefix, and
 * passes the input on with `report_keys` added, so the flow goes on after the writer.
 */
export async function writeReport(
  context: AdapterContext,
  payload: Record<string, unknown>,
  report: { name: string; json: unknown; markdown?: string | undefined },
): Promise<AdapterOutput[]> {
  const packageId = requireString(payload, 'package_id', context.stage);
  const json = await context.writeObject(
    `${report.name}/${packageId}.json`,
    JSON.stringify(report.json, null, 2),
    {
      contentType: 'application/json',
      metadata: { package_id: packageId, report: report.name },
    },
  );
  const markdown =
    report.markdown === undefined
      ? undefined
      : await context.writeObject(`${report.name}/${packageId}.md`, report.markdown, {
          contentType: 'text/markdown; charset=utf-8',
          metadata: { package_id: packageId, report: report.name },
        });
  return [
    {
      payload: {
        ...payload,
        report_keys: { json: json.key, ...(markdown ? { markdown: markdown.key } : {}) },
      },
    },
  ];
}

/** The output schema of a writer: its input's schema with `report_keys`. */
export function withReportKeys(schema: TSchema & { properties: Record<string, TSchema> }) {
  return Type.Object({ ...schema.properties, report_keys: reportKeys });
}

/** A markdown table cell: no pipes or line breaks. */
export function cell(text: string | number): string {
  return String(text).replace(/\|/g, '\\|').replace(/\s+/g, ' ');
}
