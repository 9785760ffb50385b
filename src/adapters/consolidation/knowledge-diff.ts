import { lstat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Type } from 'typebox';
import { type ConceptMap, parseConceptMap } from '../../consolidation/concept-map.js';
import { isReadableSource, newestPerSource, type SourceEntry } from '../../consolidation/sources.js';
import { isUnderAllowedRoots } from '../../fileshare/local-share.js';
import { defineAdapter } from '../adapter.js';
import { onFirstUse } from '../api-access.js';
import { fetchConfigFields, megabytes, webClientFromConfig } from '../web/web-options.js';
import { goneAtHttpOrigin } from './http-origins.js';
import { currentMapOf, knowledgeBaseField, readJson, requireString } from './knowledge-flow.js';

export interface SourceDiff {
  knowledge_base: string;
  previous_map_key: string | null;
  previous_version: number;
  added: SourceEntry[];
  changed: SourceEntry[];
  removed: string[];
  unchanged: SourceEntry[];
}

export const knowledgeDiff = defineAdapter({
  type: 'knowledge_diff',
  group: 'knowledge',
  summary: 'Compare the listed sources with the last concept map: added, changed, removed, unchanged.',
  description:
    'Reads a storage_enumerator manifest and the current concept map of the knowledge base (the newest version ' +
    'registered by concept_map_writer in a run that completed). Sources are compared by `source_id` and content hash; ' +
    'of a source stored several times the newest object counts; objects consolidation cannot read (not markdown, ' +
    'text or HTML) are left out. Writes `diff.json` (`{knowledge_base, previous_map_key, previous_version, added, ' +
    'changed, removed, unchanged}`: entries as in the manifest, `removed` as source ids) and emits `{knowledge_base, ' +
    'diff_key, previous_map_key, added, changed, removed, unchanged}` with counts. Before the first map every source ' +
    'is added. A source removed at its origin is removed, although its stored objects remain (they are what an ' +
    'earlier run fetched): a `file://` source under the `fileshare_roots` setting whose file is gone; an http(s) ' +
    'source that `origin_sitemaps` (all read) do not list, or whose URL answers 404 or 410 (`check_http_origins`, ' +
    'through the web client: rate limit, robots.txt, redirects, retries; any other answer or failure keeps it). ' +
    'The concept map then drops it, and the pages that cited it are rewritten from the other sources, or withdrawn. ' +
    '`diff.json` adds `http_origins: {requests, unread_sitemaps}`.',
  config: Type.Object(
    {
      knowledge_base: knowledgeBaseField,
      check_http_origins: Type.Boolean({
        default: true,
        description:
          'GET each http(s) source (not settled by `origin_sitemaps`): a 404 or 410 removes it; any other answer keeps it',
      }),
      origin_sitemaps: Type.Array(Type.String({ pattern: '^https?://' }), {
        default: [],
        description:
          'sitemaps that list every page of their origin: a source of that origin they do not list is removed, without a request to it (an origin whose sitemap cannot be read is checked page by page)',
      }),
      max_page_mb: Type.Number({ exclusiveMinimum: 0, maximum: 100, default: 10 }),
      ...fetchConfigFields({ rateLimit: 5, timeoutSeconds: 30 }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({ manifest_key: Type.String() }),
  output: Type.Object({
    knowledge_base: Type.String(),
    diff_key: Type.String(),
    previous_map_key: Type.Union([Type.String(), Type.Null()]),
    added: Type.Integer(),
    changed: Type.Integer(),
    removed: Type.Integer(),
    unchanged: Type.Integer(),
  }),
  create: (config, resources) => {
    const webClient = onFirstUse(() =>
      webClientFromConfig(config, megabytes(config.max_page_mb), 'knowledge_diff', resources.settings),
    );
    return async (payload, context) => {
      const manifestKey = requireString(payload, 'manifest_key', 'knowledge_diff');
      const manifest = await readJson<{ objects?: SourceEntry[] }>(
        resources.storage,
        manifestKey,
        'manifest',
      );
      const onShares = await stillAtOrigin(
        newestPerSource(
          (manifest.objects ?? []).filter((entry) => isReadableSource(entry.key, contentTypeHint(entry.key))),
        ),
        resources.settings.fileshare_roots,
      );
      const origins =
        config.check_http_origins || config.origin_sitemaps.length > 0
          ? await goneAtHttpOrigin(
              onShares.map((entry) => entry.url ?? ''),
              webClient(),
              {
                checkPages: config.check_http_origins,
                sitemaps: config.origin_sitemaps,
                maxBytes: megabytes(config.max_page_mb),
              },
              context.signal,
            )
          : undefined;
      const listed = onShares.filter((entry) => !(entry.url && origins?.gone.has(entry.url)));
      const current = await currentMapOf(context.syncState, config.knowledge_base);
      let previous: ConceptMap | undefined;
      if (current) {
        const body = await resources.storage.get(current.map_key);
        previous = parseConceptMap(body.toString('utf8'), current.map_key);
      }
      const diff = diffSources(previous, listed);
      const result: SourceDiff = {
        knowledge_base: config.knowledge_base,
        previous_map_key: current?.map_key ?? null,
        previous_version: previous?.version ?? 0,
        ...diff,
      };
      const info = await context.writeObject(
        'diff.json',
        JSON.stringify({
          ...result,
          ...(origins
            ? { http_origins: { requests: origins.requests, unread_sitemaps: origins.unreadSitemaps } }
            : {}),
        }),
        { contentType: 'application/json' },
      );
      return [
        {
          payload: {
            knowledge_base: config.knowledge_base,
            diff_key: info.key,
            previous_map_key: result.previous_map_key,
            added: diff.added.length,
            changed: diff.changed.length,
            removed: diff.removed.length,
            unchanged: diff.unchanged.length,
          },
        },
      ];
    };
  },
});

export function diffSources(previous: ConceptMap | undefined, listed: readonly SourceEntry[]) {
  const known = previous?.sources ?? {};
  const added: SourceEntry[] = [];
  const changed: SourceEntry[] = [];
  const unchanged: SourceEntry[] = [];
  const seen = new Set<string>();
  for (const entry of listed) {
    seen.add(entry.source_id);
    const before = known[entry.source_id];
    if (!before) added.push(entry);
    else if (before.content_hash !== entry.content_hash) changed.push(entry);
    else unchanged.push(entry);
  }
  const removed = Object.keys(known)
    .filter((id) => !seen.has(id))
    .sort();
  return { added, changed, removed, unchanged };
}

/**
 * The sources whose origin still has them. A file of a share (a `file://` URL under one of
 * `shareRoots`) that is gone was deleted at its origin: its stored copies stay in storage
 * and in the manifest, and used to keep it in the map, cited by pages, run after run. A path
 * outside the shares is kept; http(s) origins are asked separately (http-origins.ts).
 */
export async function stillAtOrigin<Entry extends Pick<SourceEntry, 'url'>>(
  entries: readonly Entry[],
  shareRoots: readonly string[],
): Promise<Entry[]> {
  const kept: Entry[] = [];
  for (const entry of entries) {
    const file = sharePathOf(entry.url, shareRoots);
    if (file && !(await exists(file))) continue;
    kept.push(entry);
  }
  return kept;
}

function sharePathOf(url: string | null | undefined, shareRoots: readonly string[]): string | undefined {
  if (!url?.startsWith('file:')) return undefined;
  try {
    const file = fileURLToPath(url);
    return isUnderAllowedRoots(file, shareRoots) ? file : undefined;
  } catch {
    return undefined;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch (error) {
    // Only "not there" is a deletion; a share that cannot be read now (EACCES, EIO) keeps it.
    const code = (error as NodeJS.ErrnoException).code;
    return code !== 'ENOENT' && code !== 'ENOTDIR';
  }
}

/** The manifest has no content types; the extension decides, and keys without one are read as text. */
function contentTypeHint(key: string): string {
  return /\.[a-z0-9]+$/i.test(key) ? '' : 'text/plain';
}
