/**
 * concept_link_resolver: a page's "Related concepts" link only to concepts that have a page,
 * written in this run or kept from a completed earlier one. Before it, a page linked every
 * related concept of the map, and a concept without a page (rejected, no passage) was a link
 * that opened nothing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { conceptMapFormat } from '../../consolidation/concept-map.js';
import { contentHashOf } from '../../consolidation/concept-page.js';
import { collectOutputs, createAdapterTestKit, memorySyncState } from '../adapter-testing.js';
import { conceptLinkResolver } from './concept-link-resolver.js';

const kit = await createAdapterTestKit();
afterAll(() => kit.close());

const concept = (slug: string, related: string[]) => ({
  slug,
  name: slug.replace(/-/g, ' '),
  aliases: [],
  sources: [],
  related: related.map((other) => ({ slug: other, name: other.replace(/-/g, ' ') })),
});

const pageOf = (slug: string, related: string[]) => {
  const markdown = [
    `# ${slug}`,
    '',
    `The ${slug} is described here. [1]`,
    '',
    '## Related concepts',
    '',
    ...related.map((other) => `- [${other.replace(/-/g, ' ')}](${other}.md)`),
    '',
    '## Sources',
    '',
    '1. [Page](https://example.test/page)',
    '',
  ].join('\n');
  return { markdown, content_hash: contentHashOf(markdown), synthesized_by: 'extractive' };
};

describe('concept_link_resolver', () => {
  it('waits for every concept of the version, then links only to pages written now or kept from before', async () => {
    const mapKey = (
      await kit.storage.put(
        'run2/concept_map_updater/concept-map.json',
        JSON.stringify({
          format: conceptMapFormat,
          name: 'bees',
          version: 2,
          created_at: 'x',
          sources: {},
          concepts: Object.fromEntries(
            ['varroa-mite', 'oxalic-acid', 'brood-box', 'drone-comb', 'smoker'].map((slug) => [slug, {}]),
          ),
          stale: ['varroa-mite', 'oxalic-acid', 'drone-comb'],
          removed: [],
        }),
      )
    ).key;
    const syncState = memorySyncState();
    // A completed earlier run wrote the brood box page; the smoker's was rejected then.
    await syncState.put('concept-pages bees', [
      { key: 'brood-box', value: { page: true } },
      { key: 'smoker', value: { page: false } },
    ]);
    const context = kit.context({ syncState });
    const handler = conceptLinkResolver.create({}, kit.resources);
    const base = { knowledge_base: 'bees', map_key: mapKey, map_version: 2, concepts_total: 3 };
    const related = ['oxalic-acid', 'brood-box', 'drone-comb', 'smoker'];
    const varroa = {
      ...base,
      concept: concept('varroa-mite', related),
      passages: [],
      page: pageOf('varroa-mite', related),
    };
    // The drone comb's page was rejected: the validator sent it on withdrawn.
    const droneComb = { ...base, removed: { slug: 'drone-comb', name: 'drone comb' }, withdrawn: true };
    const oxalic = {
      ...base,
      concept: concept('oxalic-acid', ['varroa-mite']),
      passages: [],
      page: pageOf('oxalic-acid', ['varroa-mite']),
    };
    expect(await collectOutputs(await handler(varroa, context))).toEqual([]);
    expect(await collectOutputs(await handler(droneComb, context))).toEqual([]);
    const outputs = await collectOutputs(await handler(oxalic, context));
    expect(outputs).toHaveLength(3);
    const page = outputs.find(
      (output) =>
        output.payload.concept !== undefined &&
        (output.payload.concept as { slug: string }).slug === 'varroa-mite',
    )?.payload as typeof varroa;
    expect(page.page.markdown).toContain('- [oxalic acid](oxalic-acid.md)');
    expect(page.page.markdown).toContain('- [brood box](brood-box.md)');
    expect(page.page.markdown).not.toContain('drone-comb.md');
    expect(page.page.markdown).not.toContain('smoker.md');
    expect(page.concept.related.map((link) => link.slug)).toEqual(['oxalic-acid', 'brood-box']);
    expect(page.page.content_hash).toBe(contentHashOf(page.page.markdown));
    expect(outputs.some((output) => output.payload.withdrawn === true)).toBe(true);
    // What this run wrote is remembered for the next.
    const pages = await syncState.all('concept-pages bees');
    expect(pages.get('drone-comb')).toEqual({ page: false });
    expect(pages.get('varroa-mite')).toEqual({ page: true });
  });

  it('drops the section when no related concept has a page', async () => {
    const { keepExistingLinks } = await import('../../consolidation/concept-page.js');
    const markdown = pageOf('smoker', ['hive-tool']).markdown;
    const kept = keepExistingLinks(markdown, () => false);
    expect(kept).not.toContain('## Related concepts');
    expect(kept).toContain('## Sources');
    expect(keepExistingLinks(markdown, () => true)).toBe(markdown);
  });
});
