/**
 * The built-in adapters, listed explicitly: what is registered is what is written here.
 * Adapter types of spec 2.3 not listed yet are tracked in docs/spec-coverage.md.
 */
import type { AdapterDefinition } from './adapter.js';
import { batchSynthesizer } from './consolidation/batch-synthesizer.js';
import { conceptDetection } from './consolidation/concept-detection.js';
import { conceptFanout } from './consolidation/concept-fanout.js';
import { conceptLinkResolver } from './consolidation/concept-link-resolver.js';
import { conceptMapUpdater } from './consolidation/concept-map-updater.js';
import { conceptMapWriter } from './consolidation/concept-map-writer.js';
import { conceptSourceLoader } from './consolidation/concept-source-loader.js';
import { kbaseWriter } from './consolidation/kbase-writer.js';
import { knowledgeDiff } from './consolidation/knowledge-diff.js';
import { scribeDiffWriter } from './consolidation/scribe-diff-writer.js';
import { storageEnumerator } from './consolidation/storage-enumerator.js';
import { structuralValidator } from './consolidation/structural-validator.js';
import { convBatchProcessor } from './conversations/conv-batch-processor.js';
import { convCatalog } from './conversations/conv-catalog.js';
import { convClustering } from './conversations/conv-clustering.js';
import { convCompact } from './conversations/conv-compact.js';
import { convDeduplicate } from './conversations/conv-deduplicate.js';
import { convEnumerator } from './conversations/conv-enumerator.js';
import { convFilter } from './conversations/conv-filter.js';
import { convFilteredCollector } from './conversations/conv-filtered-collector.js';
import { convNorwegianFilter } from './conversations/conv-norwegian-filter.js';
import { convRoutineDiscovery } from './conversations/conv-routine-discovery.js';
import { convRoutineIndexer } from './conversations/conv-routine-indexer.js';
import { convRoutineRenderer } from './conversations/conv-routine-renderer.js';
import { convRoutineWriter } from './conversations/conv-routine-writer.js';
import { convStorageWriter } from './conversations/conv-storage-writer.js';
import { convStoredKeysFanout } from './conversations/conv-stored-keys-fanout.js';
import {
  convCatalogWriter,
  convClusteringWriter,
  convDeduplicateWriter,
} from './conversations/report-writers.js';
import { embeddingGenerator } from './embedding/embedding-generator.js';
import { documentConverter } from './fileshare/document-converter.js';
import { fileshareEnumerator } from './fileshare/fileshare-enumerator.js';
import { fileshareFetcher } from './fileshare/fileshare-fetcher.js';
import { htmlToMarkdown } from './markdown/html-to-markdown.js';
import { markdownStorageWriter } from './markdown/markdown-storage-writer.js';
import { segmentPublisher } from './markdown/segment-publisher.js';
import { segmentStorage } from './markdown/segment-storage.js';
import { smartSegmenter } from './markdown/smart-segmenter.js';
import { storageRetriever } from './markdown/storage-retriever.js';
import { antiBacGate } from './redaction/anti-bac-gate.js';
import { piiRedactor } from './redaction/pii-redactor.js';
import { scRedactor } from './redaction/sc-redactor.js';
import { sensitivityClassifier } from './redaction/sensitivity-classifier.js';
import { type AdapterRegistry, createAdapterRegistry } from './registry.js';
import { syntheticFanout } from './synthetic/synthetic-fanout.js';
import { syntheticSink } from './synthetic/synthetic-sink.js';
import { llmTranslator } from './translation/llm-translator.js';
import { pdfFetcher } from './web/pdf-fetcher.js';
import { sitemapParser } from './web/sitemap-parser.js';
import { urlExpander } from './web/url-expander.js';
import { webContentStorage } from './web/web-content-storage.js';
import { webCrawler } from './web/web-crawler.js';
import { webScraper } from './web/web-scraper.js';
import { wikiAttachmentFetcher } from './wiki/wiki-attachment-fetcher.js';
import { wikiPageFetcher } from './wiki/wiki-page-fetcher.js';
import { wikiSpaceCrawler } from './wiki/wiki-space-crawler.js';

// One entry per line, grouped as in spec 2.3.
export const builtinAdapters: readonly AdapterDefinition[] = [
  // web
  sitemapParser,
  urlExpander,
  webScraper,
  webCrawler,
  pdfFetcher,
  webContentStorage,
  // markdown
  storageRetriever,
  htmlToMarkdown,
  smartSegmenter,
  segmentPublisher,
  segmentStorage,
  markdownStorageWriter,
  // embedding
  embeddingGenerator,
  // translation
  llmTranslator,
  // redaction chain
  piiRedactor,
  sensitivityClassifier,
  antiBacGate,
  scRedactor,
  // file share
  fileshareEnumerator,
  fileshareFetcher,
  documentConverter,
  // conversation
  convEnumerator,
  convBatchProcessor,
  convCompact,
  convStoredKeysFanout,
  convFilter,
  convNorwegianFilter,
  convFilteredCollector,
  convDeduplicate,
  convClustering,
  convCatalog,
  convStorageWriter,
  convDeduplicateWriter,
  convClusteringWriter,
  convCatalogWriter,
  // routines
  convRoutineDiscovery,
  convRoutineIndexer,
  convRoutineRenderer,
  convRoutineWriter,
  // wiki ingest
  wikiSpaceCrawler,
  wikiPageFetcher,
  wikiAttachmentFetcher,
  // knowledge consolidation
  conceptDetection,
  conceptMapWriter,
  conceptFanout,
  conceptLinkResolver,
  conceptSourceLoader,
  batchSynthesizer,
  structuralValidator,
  kbaseWriter,
  conceptMapUpdater,
  knowledgeDiff,
  scribeDiffWriter,
  storageEnumerator,
  // synthetic load
  syntheticFanout,
  syntheticSink,
];

export function createBuiltinRegistry(): AdapterRegistry {
  return createAdapterRegistry(builtinAdapters);
}
