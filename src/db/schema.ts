/** Row types of the tables, as Kysely sees them. One interface per table. */
import type { ColumnType, Generated } from 'kysely';

export interface PipelineConfigTable {
  id: string;
  name: string;
  description: string | null;
  /** Where the YAML came from: `api`, or `file:<path>` for files synced from the pipelines dir. */
  origin: string;
  config_yaml: string;
  config_hash: string;
  version: Generated<number>;
  is_active: Generated<boolean>;
  created_at: ColumnType<Date, Date | string, Date | string>;
  updated_at: ColumnType<Date, Date | string, Date | string>;
  deleted_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
}

export interface SchemaMigrationTable {
  id: number;
  name: string;
  applied_at: ColumnType<Date, Date | string | undefined, never>;
}

export interface DatabaseSchema {
  pipeline_configs: PipelineConfigTable;
  weir_schema_migrations: SchemaMigrationTable;
}
