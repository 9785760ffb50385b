/**
 * Chat templates (spec 2.8, 4.4) in the `chat_templates` table (migration 0007). The
 * repository speaks the API's field names so the route module stays a thin shell.
 */
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ChatTemplateTable, DatabaseSchema } from './schema.js';

type TemplateRow = Selectable<ChatTemplateTable>;

export interface TemplateFields {
  name: string;
  description?: string | null | undefined;
  persona?: string | null | undefined;
  system_prompt?: string | null | undefined;
  rag?: object | undefined;
  llm?: object | undefined;
  owner_id?: string | null | undefined;
  is_public?: boolean | undefined;
  tags?: string[] | undefined;
}

export interface TemplateRecord {
  id: string;
  name: string;
  description: string | null;
  persona: string | null;
  system_prompt: string | null;
  rag: Record<string, unknown>;
  llm: Record<string, unknown>;
  owner_id: string | null;
  is_public: boolean;
  tags: string[];
  created_at: string;
  updated_at: string;
}

export interface TemplateListQuery {
  ownerId?: string | undefined;
  includePublic: boolean;
  tags?: readonly string[] | undefined;
  limit: number;
  offset: number;
}

export interface TemplatesRepository {
  /** Undefined when a template with that id already exists. */
  create(id: string, fields: TemplateFields, now: Date): Promise<TemplateRecord | undefined>;
  find(id: string): Promise<TemplateRecord | undefined>;
  list(query: TemplateListQuery): Promise<{ templates: TemplateRecord[]; total: number }>;
  /** Undefined when no template has that id. */
  replace(id: string, fields: TemplateFields, now: Date): Promise<TemplateRecord | undefined>;
  remove(id: string): Promise<boolean>;
}

export function createTemplatesRepository(db: Kysely<DatabaseSchema>): TemplatesRepository {
  const columns = (fields: TemplateFields) => ({
    name: fields.name,
    description: fields.description ?? null,
    persona: fields.persona ?? null,
    system_prompt: fields.system_prompt ?? null,
    rag: JSON.stringify(fields.rag ?? {}),
    llm: JSON.stringify(fields.llm ?? {}),
    owner_id: fields.owner_id ?? null,
    is_public: fields.is_public ?? false,
    tags: [...new Set(fields.tags ?? [])],
  });

  return {
    async create(id, fields, now) {
      const row = await db
        .insertInto('chat_templates')
        .values({ id, ...columns(fields), created_at: now, updated_at: now })
        .onConflict((conflict) => conflict.column('id').doNothing())
        .returningAll()
        .executeTakeFirst();
      return row ? present(row) : undefined;
    },

    async find(id) {
      const row = await db.selectFrom('chat_templates').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? present(row) : undefined;
    },

    async list(query) {
      let filtered = db.selectFrom('chat_templates');
      // With an owner: theirs, plus everyone's public ones unless include_public is false.
      // Without an owner: every template, or only the private ones when include_public is false.
      if (query.ownerId !== undefined) {
        const ownerId = query.ownerId;
        filtered = filtered.where((eb) =>
          query.includePublic
            ? eb.or([eb('owner_id', '=', ownerId), eb('is_public', '=', true)])
            : eb('owner_id', '=', ownerId),
        );
      } else if (query.includePublic === false) {
        filtered = filtered.where('is_public', '=', false);
      }
      if (query.tags && query.tags.length > 0) {
        filtered = filtered.where(sql<boolean>`tags && ${sql.val([...query.tags])}::text[]`);
      }
      const [rows, count] = await Promise.all([
        filtered
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('id')
          .limit(query.limit)
          .offset(query.offset)
          .execute(),
        filtered.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return { templates: rows.map(present), total: Number(count.total) };
    },

    async replace(id, fields, now) {
      const row = await db
        .updateTable('chat_templates')
        .set({ ...columns(fields), updated_at: now })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row ? present(row) : undefined;
    },

    async remove(id) {
      const result = await db.deleteFrom('chat_templates').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

function present(row: TemplateRow): TemplateRecord {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    persona: row.persona,
    system_prompt: row.system_prompt,
    rag: row.rag,
    llm: row.llm,
    owner_id: row.owner_id,
    is_public: row.is_public,
    tags: row.tags,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}
