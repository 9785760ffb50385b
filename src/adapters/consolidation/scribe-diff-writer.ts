import { createTwoFilesPatch } from 'diff';
import { Type } from 'typebox';
import { defineAdapter } from '../adapter.js';
import { conceptFlowFields, conceptPayloadOf, PageSchema, pageFlowFields } from './knowledge-flow.js';

const pagesScope = (knowledgeBase: string) => `pages ${knowledgeBase}`;

export const scribeDiffWriter = defineAdapter({
  type: 'scribe_diff_writer',
  group: 'knowledge',
  summary:
    'Store each new or changed concept page and a unified diff against its previous version, for review.',
  description:
    'Input: validated pages (structural_validator). Compares the page with the version stored last time (kept per ' +
    "knowledge base in the config's sync state). A new or changed page is stored as `pages/<slug>.md`, with " +
    '`diffs/<slug>.diff` (unified diff, `context_lines` lines of context; a new page diffs against nothing); an ' +
    'unchanged page stores nothing. A `removed` concept gets a diff that deletes its last page. Emits the input with ' +
    '`change: added | changed | unchanged | removed`, `page_key` and `diff_key` (null when nothing was stored).',
  config: Type.Object(
    { context_lines: Type.Integer({ minimum: 0, maximum: 50, default: 3 }) },
    { additionalProperties: false },
  ),
  input: Type.Object({ ...conceptFlowFields, page: Type.Optional(PageSchema) }),
  output: Type.Object({
    ...pageFlowFields,
    change: Type.Union([
      Type.Literal('added'),
      Type.Literal('changed'),
      Type.Literal('unchanged'),
      Type.Literal('removed'),
    ]),
    page_key: Type.Union([Type.String(), Type.Null()]),
    diff_key: Type.Union([Type.String(), Type.Null()]),
  }),
  create: (config, resources) => async (payload, context) => {
    const readIfThere = async (key: string) =>
      (await resources.storage.stat(key)) ? (await resources.storage.get(key)).toString('utf8') : '';
    const message = conceptPayloadOf(payload, 'scribe_diff_writer');
    const scope = pagesScope(message.knowledge_base);
    const slug = message.concept?.slug ?? message.removed?.slug ?? '';
    const known = (await context.syncState.all(scope, [slug])).get(slug) as
      | { key?: string; content_hash?: string }
      | undefined;
    const previousText = known?.key ? await readIfThere(known.key) : '';
    const diffOf = (after: string) =>
      createTwoFilesPatch(`a/${slug}.md`, `b/${slug}.md`, previousText, after, undefined, undefined, {
        context: config.context_lines,
      });
    if (message.removed) {
      if (!known) return [{ payload: { ...payload, change: 'removed', page_key: null, diff_key: null } }];
      const diff = await context.writeObject(`diffs/${slug}.diff`, diffOf(''), {
        contentType: 'text/x-diff',
      });
      await context.syncState.remove(scope, [slug]);
      return [{ payload: { ...payload, change: 'removed', page_key: null, diff_key: diff.key } }];
    }
    if (!message.page)
      return [{ payload: { ...payload, change: 'unchanged', page_key: null, diff_key: null } }];
    if (known?.content_hash === message.page.content_hash)
      return [{ payload: { ...payload, change: 'unchanged', page_key: known.key ?? null, diff_key: null } }];
    const page = await context.writeObject(`pages/${slug}.md`, message.page.markdown, {
      contentType: 'text/markdown',
    });
    const diff = await context.writeObject(`diffs/${slug}.diff`, diffOf(message.page.markdown), {
      contentType: 'text/x-diff',
    });
    await context.syncState.put(scope, [
      { key: slug, value: { key: page.key, content_hash: message.page.content_hash } },
    ]);
    return [
      {
        payload: { ...payload, change: known ? 'changed' : 'added', page_key: page.key, diff_key: diff.key },
      },
    ];
  },
});
