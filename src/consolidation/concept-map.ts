/**
 * The concept map: which concepts the sources hold and which sources each concept rests on,
 * kept as one versioned JSON object per run. It stores every source's own detections, so a
 * run detects concepts only in the sources that changed and rebuilds the map from what it
 * keeps; a concept is *stale* (to be written again) when what its page is made of changed:
 * its name, aliases, sources and their content hashes, or related concepts.
 *
 * Building: the detections of all sources are grouped by normalised name, joined through
 * aliases, then by embedding similarity of their names; a phrase found in fewer than
 * `minSources` sources, or in more than `maxCorpusShare` of them (a word every page uses is
 * no concept), is left out; the best `maxConcepts` remain.
 */
import { createHash } from 'node:crypto';
import { normalisedName, slugOf } from './concept-names.js';
import type { CorpusWords } from './corpus-words.js';
import type { ConceptEvidence, DetectedConcept } from './keyphrases.js';
import type { SourceEntry } from './sources.js';

export const conceptMapFormat = 'weir.concept-map/1';

export interface MapSource extends SourceEntry {
  /** The source's own concepts as detection found them (before the corpus-level choice). */
  detected: DetectedConcept[];
}

export interface MapConceptSource {
  source_id: string;
  score: number;
  evidence: ConceptEvidence[];
}

export interface MapConcept {
  slug: string;
  name: string;
  aliases: string[];
  score: number;
  sources: MapConceptSource[];
  /** Slugs of the concepts sharing most sources with this one. */
  related: string[];
  /** Hash of what the concept's page is written from; a change makes it stale. */
  fingerprint: string;
  /** The map version in which the fingerprint last changed. */
  changed_in: number;
}

export interface ConceptMap {
  format: typeof conceptMapFormat;
  name: string;
  version: number;
  created_at: string;
  sources: Record<string, MapSource>;
  concepts: Record<string, MapConcept>;
  /** Slugs new or changed in this version. */
  stale: string[];
  /** Concepts of the previous version that this one no longer has. */
  removed: { slug: string; name: string }[];
  /**
   * How many sources use each common word, as concept detection last counted them over most of
   * the corpus; a later run detecting a few changed sources weighs words by it.
   */
  corpus_words?: CorpusWords;
}

export interface MapOptions {
  minSources: number;
  maxCorpusShare: number;
  maxConcepts: number;
  maxSourcesPerConcept: number;
  relatedCount: number;
  /** Cosine similarity of two names' embeddings at or above which they are one concept. */
  similarityThreshold: number;
}

export const mapDefaults: MapOptions = {
  minSources: 2,
  // A corpus's main concepts are on many of its pages (varroa mite on 3 of 24 beekeeping
  // pages, brood box on 10): 0.1 threw them all out. Only a phrase on most pages is filler.
  maxCorpusShare: 0.5,
  maxConcepts: 500,
  maxSourcesPerConcept: 12,
  relatedCount: 5,
  similarityThreshold: 0.92,
};

/** Embeds concept names (the configured embedder); absent, only names and aliases merge. */
export type EmbedNames = (names: readonly string[]) => Promise<Float32Array[]>;

export interface MapUpdate {
  name: string;
  createdAt: string;
  /** Sources detected in this run (added or changed), with their detections. */
  detected: readonly MapSource[];
  /** Source ids to drop. */
  removed: readonly string[];
  /** Word counts detection made in this run (absent: the previous version's stay). */
  corpusWords?: CorpusWords | undefined;
}

/** The next version of the map: `previous` with `update` applied, rebuilt and compared. */
export async function updateConceptMap(
  previous: ConceptMap | undefined,
  update: MapUpdate,
  options: Partial<MapOptions> = {},
  embedNames?: EmbedNames,
): Promise<ConceptMap> {
  const settings = { ...mapDefaults, ...options };
  const sources: Record<string, MapSource> = { ...(previous?.sources ?? {}) };
  for (const id of update.removed) delete sources[id];
  for (const source of update.detected) sources[source.source_id] = source;
  const version = (previous?.version ?? 0) + 1;
  const built = await buildConcepts(sources, settings, previous, embedNames);
  const concepts: Record<string, MapConcept> = {};
  const stale: string[] = [];
  for (const concept of built) {
    const before = previous?.concepts[concept.slug];
    const changed = !before || before.fingerprint !== concept.fingerprint;
    concepts[concept.slug] = { ...concept, changed_in: changed ? version : (before?.changed_in ?? version) };
    if (changed) stale.push(concept.slug);
  }
  const corpusWords = update.corpusWords ?? previous?.corpus_words;
  const removed = Object.values(previous?.concepts ?? {})
    .filter((concept) => !concepts[concept.slug])
    .map((concept) => ({ slug: concept.slug, name: concept.name }))
    .sort((a, b) => a.slug.localeCompare(b.slug));
  return {
    format: conceptMapFormat,
    name: update.name,
    version,
    created_at: update.createdAt,
    sources,
    concepts,
    stale: stale.sort(),
    removed,
    ...(corpusWords ? { corpus_words: corpusWords } : {}),
  };
}

interface Group {
  keys: Set<string>;
  surfaces: Map<string, number>;
  aliases: Set<string>;
  sources: Map<string, MapConceptSource>;
}

async function buildConcepts(
  sources: Record<string, MapSource>,
  settings: MapOptions,
  previous: ConceptMap | undefined,
  embedNames: EmbedNames | undefined,
): Promise<Omit<MapConcept, 'changed_in'>[]> {
  const sourceCount = Object.keys(sources).length;
  // Group by normalised name; aliases join groups (union by key).
  const parent = new Map<string, string>();
  const find = (key: string): string => {
    let root = key;
    while (parent.get(root) !== root) root = parent.get(root) as string;
    parent.set(key, root);
    return root;
  };
  const union = (a: string, b: string) => {
    const [rootA, rootB] = [find(a), find(b)];
    if (rootA !== rootB) parent.set(rootB < rootA ? rootA : rootB, rootB < rootA ? rootB : rootA);
  };
  const byKey = new Map<string, Group>();
  for (const source of Object.values(sources)) {
    for (const concept of source.detected) {
      const key = normalisedName(concept.name);
      if (!key) continue;
      if (!parent.has(key)) parent.set(key, key);
      let group = byKey.get(key);
      if (!group) {
        group = { keys: new Set([key]), surfaces: new Map(), aliases: new Set(), sources: new Map() };
        byKey.set(key, group);
      }
      group.surfaces.set(concept.name, (group.surfaces.get(concept.name) ?? 0) + concept.score);
      for (const alias of concept.aliases) group.aliases.add(alias);
      const seen = group.sources.get(source.source_id);
      if (!seen || seen.score < concept.score)
        group.sources.set(source.source_id, {
          source_id: source.source_id,
          score: concept.score,
          evidence: concept.evidence,
        });
    }
  }
  for (const [key, group] of byKey)
    for (const alias of group.aliases) {
      const aliasKey = normalisedName(alias);
      if (byKey.has(aliasKey)) union(key, aliasKey);
    }
  let groups = mergeGroups(byKey, find);

  const maxSources =
    sourceCount >= 20 ? Math.max(settings.minSources, settings.maxCorpusShare * sourceCount) : Infinity;
  groups = groups.filter(
    (group) => group.sources.size >= settings.minSources && group.sources.size <= maxSources,
  );
  if (embedNames && groups.length > 1)
    groups = await mergeSimilar(groups, settings.similarityThreshold, embedNames);

  const ranked = groups
    .map((group) => ({ group, score: groupScore(group, sourceCount) }))
    .sort((a, b) => b.score - a.score || nameOf(a.group).localeCompare(nameOf(b.group)))
    .slice(0, settings.maxConcepts);

  // Slugs: the previous version's slug of any member key, so a concept keeps its page.
  const previousSlugOf = new Map<string, string>();
  for (const concept of Object.values(previous?.concepts ?? {}))
    for (const name of [concept.name, ...concept.aliases])
      previousSlugOf.set(normalisedName(name), concept.slug);
  const taken = new Set<string>();
  const named = ranked.map(({ group, score }) => {
    const name = nameOf(group);
    const reused = [...group.keys]
      .map((key) => previousSlugOf.get(key))
      .find((slug) => slug && !taken.has(slug));
    let slug = reused ?? slugOf(name);
    for (let suffix = 2; taken.has(slug); suffix++) slug = `${slugOf(name)}-${suffix}`;
    taken.add(slug);
    const conceptSources = [...group.sources.values()]
      .sort((a, b) => b.score - a.score || a.source_id.localeCompare(b.source_id))
      .slice(0, settings.maxSourcesPerConcept);
    const aliases = [
      ...new Set([...group.surfaces.keys(), ...group.aliases].filter((alias) => alias !== name)),
    ]
      .filter(
        (alias) =>
          normalisedName(alias) !== normalisedName(name) || alias.toLowerCase() !== name.toLowerCase(),
      )
      .sort()
      .slice(0, 10);
    return { slug, name, aliases, score: Math.round(score * 1000) / 1000, sources: conceptSources };
  });

  const related = relatedConcepts(named, settings.relatedCount);
  return named.map((concept) => {
    const links = related.get(concept.slug) ?? [];
    return { ...concept, related: links, fingerprint: fingerprintOf(concept, links, sources) };
  });
}

function mergeGroups(byKey: Map<string, Group>, find: (key: string) => string): Group[] {
  const merged = new Map<string, Group>();
  for (const [key, group] of byKey) {
    const root = find(key);
    const target = merged.get(root);
    if (!target) merged.set(root, { ...group, keys: new Set(group.keys) });
    else absorb(target, group);
  }
  return [...merged.values()];
}

function absorb(target: Group, group: Group): void {
  for (const key of group.keys) target.keys.add(key);
  for (const [surface, weight] of group.surfaces)
    target.surfaces.set(surface, (target.surfaces.get(surface) ?? 0) + weight);
  for (const alias of group.aliases) target.aliases.add(alias);
  for (const [id, entry] of group.sources) {
    const seen = target.sources.get(id);
    if (!seen || seen.score < entry.score) target.sources.set(id, entry);
  }
}

/** Joins groups whose names embed close together, the group with more sources absorbing. */
async function mergeSimilar(groups: Group[], threshold: number, embedNames: EmbedNames): Promise<Group[]> {
  const ordered = [...groups].sort(
    (a, b) => b.sources.size - a.sources.size || nameOf(a).localeCompare(nameOf(b)),
  );
  const vectors = await embedNames(ordered.map(nameOf));
  const absorbedInto = new Map<number, number>();
  for (let index = 0; index < ordered.length; index++) {
    if (absorbedInto.has(index)) continue;
    for (let other = index + 1; other < ordered.length; other++) {
      if (absorbedInto.has(other)) continue;
      if (cosine(vectors[index] as Float32Array, vectors[other] as Float32Array) >= threshold) {
        absorb(ordered[index] as Group, ordered[other] as Group);
        absorbedInto.set(other, index);
      }
    }
  }
  return ordered.filter((_, index) => !absorbedInto.has(index));
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let index = 0; index < a.length; index++) {
    dot += (a[index] as number) * (b[index] as number);
    normA += (a[index] as number) ** 2;
    normB += (b[index] as number) ** 2;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}

/**
 * Summed per-source scores times the phrase's inverse source frequency, so a specific phrase
 * outranks a common word found as often; a concept some source is about (its title or
 * heading scored it 1) counts double.
 */
function groupScore(group: Group, sourceCount: number): number {
  let sum = 0;
  let isTopic = false;
  for (const entry of group.sources.values()) {
    sum += entry.score;
    if (entry.score >= 1) isTopic = true;
  }
  const idf = Math.log((1 + sourceCount) / group.sources.size);
  return sum * idf * (isTopic ? 2 : 1);
}

function nameOf(group: Group): string {
  return [...group.surfaces.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? '';
}

function relatedConcepts(
  concepts: readonly { slug: string; sources: readonly MapConceptSource[] }[],
  count: number,
): Map<string, string[]> {
  const bySource = new Map<string, string[]>();
  for (const concept of concepts)
    for (const source of concept.sources) {
      const list = bySource.get(source.source_id) ?? [];
      list.push(concept.slug);
      bySource.set(source.source_id, list);
    }
  const related = new Map<string, string[]>();
  for (const concept of concepts) {
    const shared = new Map<string, number>();
    for (const source of concept.sources)
      for (const other of bySource.get(source.source_id) ?? [])
        if (other !== concept.slug) shared.set(other, (shared.get(other) ?? 0) + 1);
    related.set(
      concept.slug,
      [...shared.entries()]
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .slice(0, count)
        .map(([slug]) => slug),
    );
  }
  return related;
}

function fingerprintOf(
  concept: { name: string; aliases: string[]; sources: MapConceptSource[] },
  related: string[],
  sources: Record<string, MapSource>,
): string {
  const parts = {
    name: concept.name,
    aliases: concept.aliases,
    sources: concept.sources.map((source) => [
      source.source_id,
      sources[source.source_id]?.content_hash ?? '',
    ]),
    related,
  };
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);
}

/** Reads and checks a stored map. */
export function parseConceptMap(body: string, key: string): ConceptMap {
  const map = JSON.parse(body) as Partial<ConceptMap>;
  if (map.format !== conceptMapFormat || typeof map.version !== 'number' || !map.concepts || !map.sources)
    throw new Error(`${key} is not a concept map (${conceptMapFormat})`);
  return map as ConceptMap;
}
