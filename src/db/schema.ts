/** Row types of the tables, as Kysely sees them. One interface per table. */
import type { ColumnType, Generated } from 'kysely';
import type { ArrayParameter } from './array-parameter.js';
import type { Outcome, OutcomeError } from './execution-outcome.js';

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

export type ExecutionStatus = 'running' | 'completed' | 'failed' | 'cancelled';

export interface ExecutionTable {
  id: string;
  config_id: string;
  config_version: number;
  config_hash: string;
  /** The YAML as it was when the run started: later edits do not change a running execution. */
  config_yaml: string;
  tag: string | null;
  status: ExecutionStatus;
  skip_init_message: Generated<boolean>;
  init_payload: ColumnType<Record<string, unknown>, string, string>;
  /** Messages queued and not yet finished; the execution completes when it returns to 0. */
  pending_messages: Generated<number>;
  /** Messages the execution may create; null for executions started before migration 0016. */
  message_budget: ColumnType<number | null, number | null | undefined, number | null>;
  /** Messages it has created (queued), init message included; checked against the budget. */
  created_messages: Generated<number>;
  error: string | null;
  created_at: ColumnType<Date, Date | string, Date | string>;
  updated_at: ColumnType<Date, Date | string, Date | string>;
  finished_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
  /** Weir's outcome (migration 0017, execution-outcome.ts); null while running. */
  outcome: ColumnType<Outcome | null, Outcome | null | undefined, Outcome | null>;
  /** The failed and skipped messages that explain the outcome; null while running. */
  first_errors: ColumnType<OutcomeError[] | null, string | null | undefined, string | null>;
}

export type LineageStatus = 'queued' | 'completed' | 'failed' | 'skipped';

export interface LineageTable {
  message_id: string;
  correlation_id: string | null;
  execution_id: string;
  route_id: string;
  /** The stage that processes the message. */
  stage: string;
  /** The stage that emitted it (envelope `stage`). */
  emitted_by: string;
  status: LineageStatus;
  attempts: Generated<number>;
  error: string | null;
  envelope: Uint8Array | null;
  queued_at: ColumnType<Date, Date | string, Date | string>;
  started_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
  finished_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
  duration_ms: number | null;
}

export interface RouteControlTable {
  route_id: string;
  paused: boolean;
  stopped: boolean;
  updated_at: ColumnType<Date, Date | string, Date | string>;
}

export interface StorageObjectTable {
  key: string;
  /** bigint: node-postgres reads it as a string, PGlite as a number; use Number(). */
  size: ColumnType<string | number, number, number>;
  content_type: string;
  sha256: string;
  created_at: ColumnType<Date, Date | string, Date | string>;
  metadata: ColumnType<Record<string, unknown>, string, string>;
  execution_id: string | null;
  stage: string | null;
  route_id: string | null;
  correlation_id: string | null;
  extension: string;
}

export interface KnowledgeDocumentTable {
  document_id: string;
  /** The URL (or object key) the document came from: re-ingesting it updates this row. */
  source_key: string;
  url: string | null;
  title: string | null;
  /** A PostgreSQL text search configuration name (english, norwegian, simple, ...). */
  language: string;
  storage_key: string | null;
  /**
   * The page this document is a copy of, language-neutral (search-index/language.ts,
   * pageIdentity: from its hreflang alternates, else its language folder), and the copy's
   * language; null when it is no copy, or was ingested before migration 20.
   */
  page_key: string | null;
  page_language: string | null;
  front_matter: ColumnType<Record<string, unknown>, string, string>;
  execution_id: string;
  route_id: string | null;
  created_at: ColumnType<Date, Date | string, Date | string>;
  updated_at: ColumnType<Date, Date | string, Date | string>;
}

export interface KnowledgeSegmentTable {
  segment_id: string;
  document_id: string;
  segment_index: number;
  text: string;
  token_count: number;
  heading_path: ColumnType<string[], string, string>;
  language: string;
  /** tsvector; written through SQL (to_tsvector), never read as a value. */
  search_vector: ColumnType<string, string, string>;
  execution_id: string;
  updated_at: ColumnType<Date, Date | string, Date | string>;
}

export interface KnowledgeEmbeddingTable {
  segment_id: string;
  model: string;
  dimensions: number;
  /** Written as a realArray parameter (binary on PGlite), read as numbers. */
  embedding: ColumnType<number[], ArrayParameter | number[], ArrayParameter | number[]>;
  vector_storage_key: string | null;
  execution_id: string;
  updated_at: ColumnType<Date, Date | string, Date | string>;
}

export interface KnowledgeModelTable {
  model: string;
  dimensions: number;
  /** Name of the model's HNSW index; null when pgvector is not installed. */
  vector_index: string | null;
  created_at: ColumnType<Date, Date | string, Date | string>;
}

/** Per lexeme, the segments holding it (migration 0011; kept by triggers, read by search). */
export interface KnowledgeTermTable {
  lexeme: string;
  segments: number;
}

/** Per text search configuration, segments and their summed token counts (migration 0011). */
export interface KnowledgeSegmentTotalTable {
  language: string;
  segments: ColumnType<string, string | number, string | number>;
  tokens: ColumnType<string, string | number, string | number>;
}

export type WebhookDeliveryStatus = 'pending' | 'pending_retry' | 'delivered' | 'failed' | 'dead_letter';

export interface WebhookSubscriptionTable {
  webhook_id: string;
  url: string;
  /** The subscriber's signing secret; never returned by the API. */
  secret: string;
  event_types: ColumnType<string[], string, string>;
  /** config_id, execution_id, route_id, adapter_name: all given must match (AND). */
  filters: ColumnType<Record<string, string>, string, string>;
  enabled: boolean;
  created_at: ColumnType<Date, Date | string, Date | string>;
  updated_at: ColumnType<Date, Date | string, Date | string>;
}

export interface WebhookDeliveryTable {
  delivery_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  /** The exact JSON sent (and signed) on every attempt. */
  body: string;
  status: WebhookDeliveryStatus;
  /** Attempts since the delivery was created or last re-armed by a manual retry. */
  attempts: Generated<number>;
  manual_retries: Generated<number>;
  next_attempt_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
  claimed_until: ColumnType<Date | null, Date | string | null, Date | string | null>;
  claim_token: string | null;
  response_status: number | null;
  response_snippet: string | null;
  error: string | null;
  created_at: ColumnType<Date, Date | string, Date | string>;
  last_attempt_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
  delivered_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
}

/** A batch of recorded deliveries not all written as rows yet (see migration 0010). */
export interface WebhookDeliveryJournalTable {
  batch_id: string;
  claim_token: string;
  claimed_until: ColumnType<Date, Date | string, Date | string>;
  created_at: ColumnType<Date, Date | string, Date | string>;
  delivery_ids: string[];
  webhook_ids: string[];
  event_ids: string[];
  event_types: string[];
  bodies: string[];
}

/** An event of a committed state change not yet recorded as deliveries (migration 0012). */
export interface WebhookEventOutboxTable {
  event_type: string;
  /** The execution id (execution events) or message id (lineage.failed). */
  subject_id: string;
  /** The event as raised on the bus (WeirEvent). */
  event: ColumnType<Record<string, unknown>, string, string>;
  created_at: ColumnType<Date, Date | string, Date | string>;
  /** Recorded by a sweep; kept as a mark for a while (migration 0012). */
  recorded: Generated<boolean>;
}

/** What an incremental source adapter knew after a run (migration 0013). */
export interface AdapterSyncStateTable {
  config_id: string;
  scope: string;
  item_key: string;
  value: ColumnType<Record<string, unknown>, string, string>;
  execution_id: string;
  updated_at: ColumnType<Date, Date | string, Date | string>;
}

/** Keys an execution has claimed, each once (migration 0014). */
export interface ExecutionClaimTable {
  execution_id: string;
  scope: string;
  claim_key: string;
}

/** Arrivals and completions of a fan-in (migration 0015). */
export interface ExecutionFanInArrivalTable {
  execution_id: string;
  group_key: string;
  item_key: string;
  value: ColumnType<Record<string, unknown>, string, string>;
}

export interface ExecutionFanInGroupTable {
  execution_id: string;
  group_key: string;
  arrived: number;
  completed_by: string | null;
}

export interface ChatTemplateTable {
  id: string;
  name: string;
  description: string | null;
  persona: string | null;
  system_prompt: string | null;
  rag: ColumnType<Record<string, unknown>, string, string>;
  llm: ColumnType<Record<string, unknown>, string, string>;
  owner_id: string | null;
  is_public: boolean;
  tags: string[];
  created_at: ColumnType<Date, Date | string, Date | string>;
  updated_at: ColumnType<Date, Date | string, Date | string>;
}

export interface DatabaseSchema {
  chat_templates: ChatTemplateTable;
  webhook_subscriptions: WebhookSubscriptionTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_delivery_journal: WebhookDeliveryJournalTable;
  webhook_event_outbox: WebhookEventOutboxTable;
  adapter_sync_state: AdapterSyncStateTable;
  execution_claims: ExecutionClaimTable;
  execution_fan_in_arrivals: ExecutionFanInArrivalTable;
  execution_fan_in_groups: ExecutionFanInGroupTable;
  webhook_subscription_version: {
    singleton: Generated<boolean>;
    version: ColumnType<string, number, number>;
  };
  /** View: delivery rows, and the deliveries still only in the journal (as pending). */
  webhook_delivery_records: WebhookDeliveryTable;
  knowledge_documents: KnowledgeDocumentTable;
  knowledge_segments: KnowledgeSegmentTable;
  knowledge_embeddings: KnowledgeEmbeddingTable;
  knowledge_models: KnowledgeModelTable;
  knowledge_terms: KnowledgeTermTable;
  knowledge_segment_totals: KnowledgeSegmentTotalTable;
  storage_objects: StorageObjectTable;
  route_controls: RouteControlTable;
  executions: ExecutionTable;
  lineage: LineageTable;
  pipeline_configs: PipelineConfigTable;
  weir_schema_migrations: SchemaMigrationTable;
}
