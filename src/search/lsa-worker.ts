/**
 * The worker side of lsa-index.ts's build: the term-segment matrix and its SVD (lsa-model.ts),
 * seconds of CPU the service's event loop must not spend. Sends back the model's arrays
 * (their buffers moved, not copied), the terms joined by newlines (the analyzer's terms hold
 * none), and the CPU time it took.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { buildLsaModel, type LsaText } from './lsa-model.js';

const port = parentPort;
if (!port) throw new Error('lsa-worker.ts runs as a worker thread only');
const { segments, rank } = workerData as { segments: LsaText[]; rank: number };
const cpu = process.cpuUsage();
const model = buildLsaModel(segments, rank);
const cpuMs = process.cpuUsage(cpu).user / 1000;
if (!model) port.postMessage({ model: undefined, cpuMs });
else
  port.postMessage(
    {
      model: {
        rank: model.rank,
        terms: [...model.terms.keys()].join('\n'),
        idf: model.idf,
        termVectors: model.termVectors,
        segmentVectors: model.segmentVectors,
      },
      cpuMs,
    },
    [model.idf.buffer, model.termVectors.buffer, model.segmentVectors.buffer] as ArrayBuffer[],
  );
