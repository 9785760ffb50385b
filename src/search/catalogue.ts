/**
 * What chat and search can use right now (spec 4.3): GET /chat/capabilities and
 * GET /chat/sources. Both read the knowledge index, so the answer reflects what was indexed,
 * not only what is configured.
 */
import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import { isoCodeOf, searchLanguages } from '../search-index/language.js';
import type { Settings } from '../settings.js';

export interface IndexedModel {
  model: string;
  dimensions: number;
  segments: number;
}

/** Per model: dimensions and the number of embedded segments. */
export async function indexedModels(db: Kysely<DatabaseSchema>): Promise<IndexedModel[]> {
  const result = await sql<{ model: string; dimensions: number; segments: number }>`
    select m.model, m.dimensions,
           (select count(*) from knowledge_embeddings e where e.model = m.model)::int as segments
    from knowledge_models m order by m.model`.execute(db);
  return result.rows;
}

export function embeddingModelStatus(
  settings: Settings,
  indexed: readonly IndexedModel[],
  vectorSupport: boolean,
) {
  return settings.embedding_models.map((model) => {
    const entry = indexed.find((item) => item.model === model.name);
    const segments = entry?.segments ?? 0;
    return {
      name: model.name,
      provider: model.provider,
      dimensions: model.dimensions,
      indexed_segments: segments,
      index_status: !vectorSupport
        ? ('unavailable' as const)
        : segments > 0
          ? ('ready' as const)
          : ('empty' as const),
    };
  });
}

export function languageList() {
  return searchLanguages
    .filter((language) => language !== 'simple')
    .map((language) => ({ code: isoCodeOf(language) ?? language, text_search_config: language }));
}

export interface SourceRow {
  execution_id: string;
  config_id: string | null;
  config_name: string | null;
  tag: string | null;
  embedding_models: string[];
  document_count: number;
  segment_count: number;
  indexed_at: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Executions that have embedded segments (optionally of one model), most recent first. */
export async function listSources(
  db: Kysely<DatabaseSchema>,
  options: { embeddingModel?: string | undefined; minSegments: number },
): Promise<SourceRow[]> {
  const result = await sql<{
    execution_id: string;
    embedding_models: string[];
    document_count: number;
    segment_count: number;
    indexed_at: Date | string | null;
  }>`
    select e.execution_id,
           array_agg(distinct e.model order by e.model) as embedding_models,
           count(distinct s.document_id)::int as document_count,
           count(distinct e.segment_id)::int as segment_count,
           max(e.updated_at) as indexed_at
    from knowledge_embeddings e
    join knowledge_segments s on s.segment_id = e.segment_id
    ${options.embeddingModel !== undefined ? sql`where e.model = ${options.embeddingModel}` : sql``}
    group by e.execution_id
    having count(distinct e.segment_id) >= ${options.minSegments}
    order by max(e.updated_at) desc, e.execution_id`.execute(db);
  const ids = result.rows.map((row) => row.execution_id).filter((id) => UUID.test(id));
  const executions =
    ids.length === 0
      ? []
      : await db
          .selectFrom('executions')
          .leftJoin('pipeline_configs', 'pipeline_configs.id', 'executions.config_id')
          .select(['executions.id', 'executions.config_id', 'executions.tag', 'pipeline_configs.name'])
          .where('executions.id', 'in', ids)
          .execute();
  const byId = new Map(executions.map((execution) => [execution.id, execution]));
  return result.rows.map((row) => {
    const execution = byId.get(row.execution_id);
    return {
      execution_id: row.execution_id,
      config_id: execution?.config_id ?? null,
      config_name: execution?.name ?? null,
      tag: execution?.tag ?? null,
      embedding_models: parseArray(row.embedding_models),
      document_count: row.document_count,
      segment_count: row.segment_count,
      indexed_at: row.indexed_at === null ? null : new Date(row.indexed_at).toISOString(),
    };
  });
}

/** A text[] arrives as an array from node-postgres and PGlite; a `{a,b}` literal is handled too. */
function parseArray(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value === 'string')
    return value
      .replace(/^\{|\}$/g, '')
      .split(',')
      .filter(Boolean);
  return [];
}
