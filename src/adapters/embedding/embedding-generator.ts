import { Type } from 'typebox';
import type { Embedder } from '../../embedding/embedder.js';
import { mapLimited } from '../../runtime/map-limited.js';
import { keySegment } from '../../storage/keys.js';
import { type AdapterContext, type AdapterOutput, defineAdapter } from '../adapter.js';
import { type DocumentMetadata, documentInput, documentOf } from '../markdown/document.js';
import { readSegment, type SegmentValue } from '../markdown/segment-storage.js';

interface Item {
  /** Position in the batch (0 outside batches). */
  batchIndex: number;
  document: DocumentMetadata;
  segment: SegmentValue;
  segmentIndex: number;
  total: number;
  segmentId?: string;
}

export const embeddingGenerator = defineAdapter({
  type: 'embedding_generator',
  group: 'embedding',
  summary:
    'Embed each segment with one or more models, write the vectors to storage and the knowledge index.',
  description:
    'Reads the segment_publisher payload `{segment, segment_index, total}` with metadata.document. Upserts the document ' +
    'and the segment into the knowledge index (keyword search works without segment_storage), embeds the text with every ' +
    'model of `models` (names of the `embedding_models` setting; an unknown name fails the step at start), writes each ' +
    'vector as little-endian float32 bytes at `<segment_id>.<model>.f32` and stores it in the index. Accepts batches ' +
    '(`batch:`): the texts of a batch go to each model in calls of up to its maxBatchSize. Emits ' +
    '`{segment_id, model, vector_storage_key}` per model per segment.',
  config: Type.Object(
    {
      models: Type.Optional(
        Type.Array(Type.String({ minLength: 1 }), {
          minItems: 1,
          maxItems: 8,
          uniqueItems: true,
          description: 'embedding model names; absent: the default model (the first of the setting)',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({
    segment: Type.Object({
      text: Type.String(),
      token_count: Type.Integer(),
      heading_path: Type.Array(Type.String()),
    }),
    segment_index: Type.Integer({ minimum: 0 }),
    total: Type.Integer({ minimum: 1 }),
  }),
  output: Type.Object({
    segment_id: Type.String(),
    model: Type.String(),
    vector_storage_key: Type.String(),
  }),
  batch: true,
  checkSettings: (config, settings) => {
    const configured = settings.embedding_models.map((model) => model.name);
    return (config.models ?? []).flatMap((name, index) =>
      configured.includes(name)
        ? []
        : [
            {
              code: 'E212' as const,
              field: ['models', index],
              message: `embedding model ${name} is not configured; embedding_models has ${configured.join(', ') || 'no models'}`,
              remediation:
                'Name a model of the embedding_models setting (WEIR_EMBEDDING_MODELS), or add this one.',
            },
          ],
    );
  },
  create: (config, resources) => {
    const names = config.models ?? [resources.embedders.defaultModel];
    const embedders: Embedder[] = names.map((name) => {
      const embedder = resources.embedders.get(name);
      if (!embedder) {
        throw new Error(
          `embedding_generator: model ${name} is not configured; embedding_models has ${resources.embedders.names.join(', ') || 'no models'}`,
        );
      }
      return embedder;
    });

    /** Upserts the documents and segments of the batch in one transaction; sets `segmentId`. */
    async function index(items: Item[], context: AdapterContext): Promise<void> {
      const byDocument = new Map<string, Item[]>();
      for (const item of items) {
        const group = byDocument.get(item.document.source_key);
        if (group) group.push(item);
        else byDocument.set(item.document.source_key, [item]);
      }
      const groups = [...byDocument.values()];
      const ids = await resources.knowledge.indexDocuments(
        groups.map((group) => ({
          document: documentInput((group[0] as Item).document, context),
          segments: group.map((item) => ({
            segmentIndex: item.segmentIndex,
            text: item.segment.text,
            tokenCount: item.segment.token_count,
            headingPath: item.segment.heading_path,
          })),
          // The smallest total seen: a re-run of a shorter page trims the old tail.
          total: Math.min(...group.map((item) => item.total)),
        })),
      );
      groups.forEach((group, groupIndex) => {
        for (const [position, item] of group.entries()) item.segmentId = ids[groupIndex]?.[position];
      });
    }

    async function embed(items: Item[], context: AdapterContext): Promise<AdapterOutput[]> {
      await index(items, context);
      const outputs: AdapterOutput[] = [];
      for (const embedder of embedders) {
        const vectors: Float32Array[] = [];
        for (let start = 0; start < items.length; start += embedder.maxBatchSize) {
          const texts = items.slice(start, start + embedder.maxBatchSize).map((item) => item.segment.text);
          vectors.push(...(await embedder.embed(texts, context.signal)));
        }
        // Each vector object is a file, a sidecar and a catalogue row (writeConcurrency: how many at once).
        const keys = await mapLimited(items, writeConcurrency, (item, position) => {
          const vector = vectors[position] as Float32Array;
          const segmentId = item.segmentId as string;
          return context
            .writeObject(`${segmentId}.${keySegment(embedder.name)}.f32`, float32Bytes(vector), {
              contentType: 'application/octet-stream',
              metadata: { model: embedder.name, dimensions: vector.length, segment_id: segmentId },
            })
            .then((stored) => stored.key);
        });
        const rows = items.map((item, position) => ({
          segmentId: item.segmentId as string,
          model: embedder.name,
          vector: vectors[position] as Float32Array,
          vectorStorageKey: keys[position],
          executionId: context.executionId,
        }));
        for (const [position, item] of items.entries()) {
          outputs.push({
            payload: { segment_id: item.segmentId, model: embedder.name, vector_storage_key: keys[position] },
            batchIndex: item.batchIndex,
          });
        }
        // One row per segment: a message delivered twice into one batch must not upsert a row
        // twice in one statement (PostgreSQL refuses that).
        await resources.knowledge.upsertEmbeddings([
          ...new Map(rows.map((row) => [row.segmentId, row])).values(),
        ]);
      }
      return outputs;
    }

    return async (payload, context) => {
      if (Array.isArray(payload.messages)) {
        const messages = payload.messages as {
          payload: Record<string, unknown>;
          metadata?: Record<string, unknown>;
        }[];
        const items = messages.map((message, batchIndex) =>
          readItem(
            message.payload,
            { ...context, metadata: message.metadata ?? {} },
            batchIndex,
            `messages[${batchIndex}]`,
          ),
        );
        return embed(items, context);
      }
      const outputs = await embed([readItem(payload, context, 0, 'input')], context);
      return outputs.map(({ batchIndex: _, ...output }) => output);
    };
  },
});

/**
 * Vector objects written at once per batch. Each put ends with its catalogue row, and the
 * catalogue group-commits the rows of puts that arrive together: a whole batch of 64 in flight
 * makes one catalogue statement where 8 at a time made eight, each queued behind the database's
 * other statements (bench:ingest: 211 catalogue statements instead of 912, and the embedding
 * stage's tail after the last page from 29 s to 4.5 s under load).
 */
const writeConcurrency = 64;

function readItem(
  payload: Record<string, unknown>,
  context: AdapterContext,
  batchIndex: number,
  where: string,
): Item {
  const segment = readSegment(payload?.segment, `${where} segment`);
  const segmentIndex = payload.segment_index;
  const total = payload.total;
  if (
    !Number.isInteger(segmentIndex) ||
    !Number.isInteger(total) ||
    (segmentIndex as number) >= (total as number)
  ) {
    throw new Error(
      `${where} needs integer \`segment_index\` below \`total\` (the segment_publisher payload)`,
    );
  }
  return {
    batchIndex,
    document: documentOf(context, 'embedding_generator'),
    segment,
    segmentIndex: segmentIndex as number,
    total: total as number,
  };
}

/** The vector as little-endian float32 bytes (a copy: the array may be a view on a larger buffer). */
function float32Bytes(vector: Float32Array): Uint8Array {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  for (let index = 0; index < vector.length; index++)
    view.setFloat32(index * 4, vector[index] as number, true);
  return bytes;
}
