import { Type } from 'typebox';
import { defineAdapter } from '../adapter.js';
import { documentOf } from '../markdown/document.js';
import { RenderedRoutine, withFrontMatter } from './conv-routine-renderer.js';
import { requireString } from './shared.js';

const TYPE = 'conv_routine_writer';

export const convRoutineWriter = defineAdapter({
  type: TYPE,
  group: 'routines',
  summary: 'Store a rendered routine as markdown with its front matter; pass it on to smart_segmenter.',
  description:
    'Writes `routines/<routine_id>.md` (the YAML front matter header, then the page) under the stage prefix, with the ' +
    'routine id and title in the sidecar, and adds `storage_key` to metadata.document so the knowledge index points ' +
    'at the stored page. Emits `{routine_id, storage_key, markdown, front_matter}`: smart_segmenter reads `markdown`, ' +
    'then segment_publisher -> embedding_generator make the routine searchable, and chat cites it.',
  config: Type.Object({}, { additionalProperties: false }),
  input: RenderedRoutine,
  output: Type.Object({ ...RenderedRoutine.properties, storage_key: Type.String() }),
  create: () => async (payload, context) => {
    const routineId = requireString(payload, 'routine_id', TYPE);
    const markdown = requireString(payload, 'markdown', TYPE);
    const frontMatter = (payload.front_matter ?? {}) as Record<string, unknown>;
    const document = documentOf(context, TYPE);
    const stored = await context.writeObject(
      `routines/${routineId}.md`,
      withFrontMatter(markdown, frontMatter),
      {
        contentType: 'text/markdown; charset=utf-8',
        metadata: { source_key: document.source_key, title: document.title, routine_id: routineId },
      },
    );
    return [
      {
        payload: { routine_id: routineId, storage_key: stored.key, markdown, front_matter: frontMatter },
        metadata: { document: { ...document, storage_key: stored.key } },
      },
    ];
  },
});
