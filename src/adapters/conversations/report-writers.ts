/**
 * The three *_writer adapters of the conversation flow: each stores its stage's result as
 * JSON plus a readable markdown report, and passes the result on with `report_keys`.
 */
import type { TObject } from 'typebox';
import { defineAdapter } from '../adapter.js';
import { CatalogResult } from './conv-catalog.js';
import { ClusteringResult } from './conv-clustering.js';
import { DedupResult } from './conv-deduplicate.js';
import { cell, reportWriterConfig, withReportKeys, writeReport } from './shared.js';

/**
 * A writer of one stage's result: stored as `<name>/<package_id>.json` (what `stored` makes
 * of the result, the result itself by default) and, with `markdown` on, the report `render`
 * writes, only then rendered.
 */
function defineReportWriter<Result>(spec: {
  type: string;
  summary: string;
  description: string;
  input: TObject;
  name: string;
  render: (result: Result) => string;
  stored?: (result: Result) => unknown;
}) {
  return defineAdapter({
    type: spec.type,
    group: 'conversation',
    summary: spec.summary,
    description: spec.description,
    config: reportWriterConfig,
    input: spec.input,
    output: withReportKeys(spec.input),
    create: (config) => async (payload, context) => {
      const result = payload as unknown as Result;
      return writeReport(context, payload, {
        name: spec.name,
        json: spec.stored ? spec.stored(result) : payload,
        markdown: config.markdown ? spec.render(result) : undefined,
      });
    },
  });
}

interface DedupPayload {
  package_id: string;
  conversation_count: number;
  unique_count: number;
  duplicate_count: number;
  threshold: number;
  groups: Array<{ canonical: string; duplicates: Array<{ id: string; similarity: number; exact: boolean }> }>;
}

export const convDeduplicateWriter = defineReportWriter<DedupPayload>({
  type: 'conv_deduplicate_writer',
  summary: 'Store the duplicate groups of a package (JSON and a markdown report); pass the result on.',
  description:
    "Writes conv_deduplicate's result at `dedup/<package_id>.json` and, with `markdown`, a report " +
    '(`dedup/<package_id>.md`: counts and the groups as a table) under the stage prefix. Emits its input with ' +
    '`report_keys: {json, markdown?}` added, for conv_clustering.',
  input: DedupResult,
  name: 'dedup',
  render: (result) =>
    [
      `# Duplicates in package ${cell(result.package_id)}`,
      '',
      `${result.conversation_count} conversations, ${result.unique_count} unique, ${result.duplicate_count} duplicates ` +
        `(Jaccard threshold ${result.threshold}).`,
      '',
      '| Kept | Duplicate | Similarity | Exact |',
      '|---|---|---|---|',
      ...result.groups.flatMap((group) =>
        group.duplicates.map(
          (duplicate) =>
            `| ${cell(group.canonical)} | ${cell(duplicate.id)} | ${duplicate.similarity} | ${duplicate.exact ? 'yes' : 'no'} |`,
        ),
      ),
      '',
    ].join('\n'),
});

interface ClusteringPayload {
  package_id: string;
  model: string;
  k: number;
  silhouette: number;
  clusters: Array<{
    cluster_id: string;
    size: number;
    members: Array<{ conversation_id: string; similarity: number }>;
  }>;
  noise: unknown[];
}

export const convClusteringWriter = defineReportWriter<ClusteringPayload>({
  type: 'conv_clustering_writer',
  summary: 'Store the clusters of a package (JSON and a markdown report); pass the result on.',
  description:
    "Writes conv_clustering's result at `clusters/<package_id>.json` and, with `markdown`, a report " +
    "(`clusters/<package_id>.md`: model, k, silhouette, each cluster's size and most central conversation ids) under " +
    'the stage prefix. Emits its input with `report_keys: {json, markdown?}` added, for conv_catalog.',
  input: ClusteringResult,
  name: 'clusters',
  render: (result) =>
    [
      `# Clusters of package ${cell(result.package_id)}`,
      '',
      `Model ${result.model}; k = ${result.k} (silhouette ${result.silhouette}); ${result.noise.length} conversations as noise.`,
      '',
      '| Cluster | Size | Most central conversations |',
      '|---|---|---|',
      ...result.clusters.map(
        (cluster) =>
          `| ${cell(cluster.cluster_id)} | ${cluster.size} | ${cell(
            cluster.members
              .slice(0, 3)
              .map((member) => member.conversation_id)
              .join(', '),
          )} |`,
      ),
      '',
    ].join('\n'),
});

interface CatalogPayload {
  package_id: string;
  conversation_count: number;
  published_count: number;
  unpublished: { clusters: number; conversations: number };
  labelled_by: string;
  topics: Array<{
    cluster_id: string;
    label: string;
    name?: string;
    description?: string;
    keywords: Array<{ term: string; weight: number }>;
    size: number;
    share: number;
    representatives: string[];
    trend: Array<{ period: string; count: number }>;
    members?: unknown;
  }>;
}

export const convCatalogWriter = defineReportWriter<CatalogPayload>({
  type: 'conv_catalog_writer',
  summary: 'Store the topic catalogue of a package (JSON and a markdown report); pass it on.',
  description:
    "Writes conv_catalog's topics at `catalog/<package_id>.json` without the member lists (the stored catalogue has " +
    'counts, labels, keywords, representative ids and trends, nothing to read one conversation back by), and with ' +
    '`markdown` a report (`catalog/<package_id>.md`: one section per topic, largest first, with its keywords and ' +
    'trend). Emits its input with `report_keys: {json, markdown?}` added, for conv_routine_discovery.',
  input: CatalogResult,
  name: 'catalog',
  stored: (catalog) => ({
    ...catalog,
    topics: catalog.topics.map(({ members: _members, ...topic }) => topic),
  }),
  render: catalogMarkdown,
});

function catalogMarkdown(catalog: CatalogPayload): string {
  const lines = [
    `# Topics of package ${cell(catalog.package_id)}`,
    '',
    `${catalog.published_count} of ${catalog.conversation_count} conversations in ${catalog.topics.length} topics ` +
      `(labels: ${catalog.labelled_by}). ${catalog.unpublished.conversations} conversations in ` +
      `${catalog.unpublished.clusters} smaller clusters or as noise are not published.`,
    '',
  ];
  for (const topic of catalog.topics) {
    lines.push(`## ${topic.name ?? topic.label}`, '');
    if (topic.description) lines.push(topic.description, '');
    lines.push(
      `- Conversations: ${topic.size} (${Math.round(topic.share * 1000) / 10} %)`,
      `- Keywords: ${topic.keywords.map((keyword) => keyword.term).join(', ')}`,
      `- Representative conversations: ${topic.representatives.join(', ')}`,
      `- Trend: ${topic.trend.map((point) => `${point.period}: ${point.count}`).join(', ')}`,
      '',
    );
  }
  return lines.join('\n');
}
