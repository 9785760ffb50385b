import { pipelineConfigs } from './0001-pipeline-configs.js';
import { executionsAndLineage } from './0002-executions-lineage.js';
import { routeControls } from './0003-route-controls.js';
import { storageCatalogue } from './0004-storage-catalogue.js';
import { knowledgeIndex } from './0005-knowledge-index.js';
import { webhooks } from './0006-webhooks.js';
import { chatTemplates } from './0007-chat-templates.js';
import { webhookDeliveryWrites } from './0008-webhook-delivery-writes.js';
import { lineageWrites } from './0009-lineage-writes.js';
import { webhookDeliveryJournal } from './0010-webhook-delivery-journal.js';
import { keywordStatistics } from './0011-keyword-statistics.js';
import { webhookEventOutbox } from './0012-webhook-event-outbox.js';
import { syncState } from './0013-sync-state.js';
import { executionClaims } from './0014-execution-claims.js';
import { executionFanIn } from './0015-execution-fan-in.js';
import { executionMessageBudget } from './0016-execution-message-budget.js';
import { executionOutcome } from './0017-execution-outcome.js';
import { lineageFillfactor } from './0018-lineage-fillfactor.js';
import { documentUrls } from './0019-document-urls.js';
import { documentPages } from './0020-document-pages.js';
import type { Migration } from './migration.js';

/** Every migration, in the order applied. Append only; never edit one that has shipped. */
export const migrations: readonly Migration[] = [
  pipelineConfigs,
  executionsAndLineage,
  routeControls,
  storageCatalogue,
  knowledgeIndex,
  webhooks,
  chatTemplates,
  webhookDeliveryWrites,
  lineageWrites,
  webhookDeliveryJournal,
  keywordStatistics,
  webhookEventOutbox,
  syncState,
  executionClaims,
  executionFanIn,
  executionMessageBudget,
  executionOutcome,
  lineageFillfactor,
  documentUrls,
  documentPages,
];
