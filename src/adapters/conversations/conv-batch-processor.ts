import path from 'node:path';
import { Type } from 'typebox';
import { packageContents } from '../../conversations/formats/export-layout.js';
import type { PackageFile } from '../../conversations/formats/package-files.js';
import { detectFormat, readPackage } from '../../conversations/formats/read-package.js';
import {
  type Conversation,
  type ConversationFormat,
  conversationFormats,
  defaultParseLimits,
  type ParseLimits,
} from '../../conversations/model.js';
import { localPackageFiles, storagePackageFiles } from '../../conversations/packages.js';
import { resolveShareRoot, ShareAccessError } from '../../fileshare/local-share.js';
import type { AdapterResources } from '../adapter.js';
import { defineAdapter, PermanentFailure } from '../adapter.js';
import { PackageDescriptor } from './conv-enumerator.js';
import { packageFields, requireString, routed } from './shared.js';

const TYPE = 'conv_batch_processor';

export const NormalisedConversation = Type.Object({
  conversation_id: Type.String(),
  source_format: Type.Union(conversationFormats.map((format) => Type.Literal(format))),
  title: Type.Optional(Type.String()),
  channel: Type.Optional(Type.String()),
  started_at: Type.Optional(Type.String()),
  turns: Type.Array(
    Type.Object({
      role: Type.Union(['user', 'assistant', 'agent', 'system', 'tool'].map((role) => Type.Literal(role))),
      text: Type.String(),
      at: Type.Optional(Type.String()),
      bot: Type.Optional(
        Type.String({ description: 'the bot or app that wrote an `assistant` turn of a team chat' }),
      ),
    }),
  ),
});

export const Rejected = Type.Array(Type.Object({ conversation_id: Type.String(), reason: Type.String() }), {
  description: 'conversations that could not be read, with why (first 100 of the package, on batch 0)',
});

export const IgnoredFiles = Type.Array(Type.Object({ path: Type.String(), reason: Type.String() }), {
  description:
    'files of the package that hold no conversations, each with why it is not read (first 100, on batch 0): a ' +
    "ChatGPT export's user.json, message_feedback.json, chat.html, images; a Slack export's channels.json, users.json",
});

export const convBatchProcessor = defineAdapter({
  type: TYPE,
  group: 'conversation',
  summary: 'Stream a package and normalise its conversations into one shape, in batches (fan-out).',
  description:
    'Reads the package conv_enumerator found, streamed (a ChatGPT export of any size is read one conversation at a ' +
    'time), in its format: ChatGPT (the `mapping` tree walked from `current_node`), Slack (threads, and the rest of a ' +
    "channel's day), Teams (chats and channel threads; HTML bodies to text) or JSONL. A package may be a ZIP as " +
    'downloaded (read in place, entries streamed) or an unzipped export folder; only the files that hold ' +
    "conversations are read (a ChatGPT export's `conversations.json` or `conversations-NNN.json`, a Slack export's " +
    'day files) and the others are listed in `ignored` with why. It reads the package twice: once ' +
    'to count, so every batch carries `package_total` (what the fan-in of conv_filtered_collector waits for), then to ' +
    'emit. A conversation that cannot be read (a cycle in the mapping, a turn over `max_turn_characters`, a JSONL line ' +
    'that is not UTF-8 or JSON) is left out and listed in `rejected`; a package that cannot be read on (truncated JSON, ' +
    'invalid UTF-8 in a JSON file) or has no readable conversation fails with where it broke. Emits ' +
    '`{package_id, format, package_total, batch_index, batch_count, conversations: [{conversation_id, source_format, ' +
    'title?, channel?, started_at?, turns: [{role, text, at?, bot?}]}], rejected, ignored}` per batch of `batch_size`.',
  config: Type.Object(
    {
      batch_size: Type.Integer({
        minimum: 1,
        maximum: 5000,
        default: 200,
        description: 'conversations per message',
      }),
      max_turn_characters: Type.Integer({
        minimum: 100,
        maximum: 10_000_000,
        default: 200_000,
        description: 'a longer turn rejects its conversation (a pasted log, an attachment inlined)',
      }),
    },
    { additionalProperties: false },
  ),
  input: PackageDescriptor,
  output: Type.Object({
    ...packageFields,
    format: Type.Union(conversationFormats.map((format) => Type.Literal(format))),
    batch_index: Type.Integer({ minimum: 0 }),
    batch_count: Type.Integer({ minimum: 1 }),
    conversations: Type.Array(NormalisedConversation),
    rejected: Rejected,
    ignored: IgnoredFiles,
  }),
  fanOut: true,
  create: (config, resources) => async (payload, context) => {
    const packageId = requireString(payload, 'package_id', TYPE);
    const files = await packageFilesOf(payload, resources);
    const format =
      typeof payload.format === 'string' && payload.format !== 'auto'
        ? (payload.format as ConversationFormat)
        : await detectFormat(files);
    const limits: ParseLimits = { ...defaultParseLimits, maxTurnCharacters: config.max_turn_characters };
    const ignored = packageContents(format, files).ignored.slice(0, 100);

    // First pass: count, so that every batch can say how many conversations the package has.
    let total = 0;
    const rejected: Array<{ conversation_id: string; reason: string }> = [];
    let rejectedCount = 0;
    for await (const item of readPackage(format, files, limits)) {
      if (context.signal.aborted) throw new Error('cancelled');
      if ('conversation' in item) total++;
      else if (rejectedCount++ < 100) rejected.push(item.rejected);
    }
    if (total === 0) {
      throw new PermanentFailure(
        `package ${packageId} has no readable conversation (${rejectedCount} rejected${rejected[0] ? `, first: ${rejected[0].conversation_id}: ${rejected[0].reason}` : ''})`,
      );
    }
    const batchCount = Math.ceil(total / config.batch_size);

    async function* batches() {
      let batch: Conversation[] = [];
      let index = 0;
      let seen = 0;
      const emit = () =>
        routed(context, {
          package_id: packageId,
          package_total: total,
          format,
          batch_index: index,
          batch_count: batchCount,
          conversations: batch,
          rejected: index === 0 ? rejected : [],
          ignored: index === 0 ? ignored : [],
        });
      for await (const item of readPackage(format, files, limits)) {
        if (!('conversation' in item)) continue;
        // The file changed between the passes: the counts would no longer add up.
        if (++seen > total)
          throw new Error(
            `package ${packageId} changed while it was read (more than ${total} conversations)`,
          );
        batch.push(item.conversation);
        if (batch.length === config.batch_size) {
          yield emit();
          batch = [];
          index++;
        }
      }
      if (batch.length > 0) yield emit();
      if (seen !== total)
        throw new Error(`package ${packageId} changed while it was read (${seen} of ${total} conversations)`);
    }
    return batches();
  },
});

async function packageFilesOf(
  payload: Record<string, unknown>,
  resources: AdapterResources,
): Promise<PackageFile[]> {
  if (payload.location === 'storage')
    return storagePackageFiles(resources.storage, requireString(payload, 'key', TYPE));
  const root = await resolveShareRoot(
    requireString(payload, 'root', TYPE),
    resources.settings.fileshare_roots,
  );
  const relative = typeof payload.path === 'string' ? payload.path : '';
  const location = path.resolve(root, relative);
  if (path.relative(root, location).startsWith('..'))
    throw new ShareAccessError(`path ${relative} leaves the share`);
  return localPackageFiles(location);
}
