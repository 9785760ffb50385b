/**
 * The built-in adapters, listed explicitly: what is registered is what is written here.
 * Adapter types of spec 2.3 not listed yet are tracked in docs/spec-coverage.md.
 */
import type { AdapterDefinition } from './adapter.js';
import { convBatchProcessor } from './conversation/conv-batch-processor.js';
import { convCatalog } from './conversation/conv-catalog.js';
import { convClustering } from './conversation/conv-clustering.js';
import { convCompact } from './conversation/conv-compact.js';
import { convDeduplicate } from './conversation/conv-deduplicate.js';
import { convEnumerator } from './conversation/conv-enumerator.js';
import { convFilter } from './conversation/conv-filter.js';
import { convFilteredCollector } from './conversation/conv-filtered-collector.js';
import { convNorwegianFilter } from './conversation/conv-norwegian-filter.js';
import { convStorageWriter } from './conversation/conv-storage-writer.js';
import { convStoredKeysFanout } from './conversation/conv-stored-keys-fanout.js';
import {
  convCatalogWriter,
  convClusteringWriter,
  convDeduplicateWriter,
} from './conversation/report-writers.js';
import { embeddingGenerator } from './embedding/embedding-generator.js';
import { documentConverter } from './fileshare/document-converter.js';
import { fileshareEnumerator } from './fileshare/fileshare-enumerator.js';
import { fileshareFetcher } from './fileshare/fileshare-fetcher.js';
import { batchSynthesizer } from './knowledge/batch-synthesizer.js';
import { conceptDetection } from './knowledge/concept-detection.js';
import { conceptFanout } from './knowledge/concept-fanout.js';
import { conceptMapUpdater } from './knowledge/concept-map-updater.js';
import { conceptMapWriter } from './knowledge/concept-map-writer.js';
import { conceptSourceLoader } from './knowledge/concept-source-loader.js';
import { kbaseWriter } from './knowledge/kbase-writer.js';
import { knowledgeDiff } from './knowledge/knowledge-diff.js';
import { scribeDiffWriter } from './knowledge/scribe-diff-writer.js';
import { storageEnumerator } from './knowledge/storage-enumerator.js';
import { structuralValidator } from './knowledge/structural-validator.js';
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
import { convRoutineDiscovery } from './routines/conv-routine-discovery.js';
import { convRoutineIndexer } from './routines/conv-routine-indexer.js';
import { convRoutineRenderer } from './routines/conv-routine-renderer.js';
import { convRoutineWriter } from './routines/conv-routine-writer.js';
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
