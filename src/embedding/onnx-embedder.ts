/**
 * The `onnx` provider: a sentence-embedding model run in-process with onnxruntime-node (CPU),
 * loaded from a local directory and never fetched from a hub. The directory holds
 * `model.onnx` and a WordPiece tokenizer (`vocab.txt`, or `tokenizer.json` of a WordPiece
 * model), as exported for BERT-family models such as all-MiniLM-L6-v2.
 *
 * The files and the vocabulary are checked when the embedder is created (start-up), so a wrong
 * `model_path` stops the service with the path in the message. The runtime is imported and the
 * session loaded on the first `embed`, so start-up stays fast when the model is not used; the
 * model's inputs and output size are checked then, against `dimensions` of the setting.
 *
 * Inference: `input_ids`, `attention_mask` and `token_type_ids` (each only when the model
 * declares it) as int64 (or int32 if so declared) tensors, padded per batch; the first output is
 * mean-pooled over the attention mask when it is `[batch, seq, dim]`, taken as it is when
 * `[batch, dim]`, then L2-normalised.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Embedder, normalize } from './embedder.js';
import { EmbeddingProviderError } from './openai-embedder.js';

export interface OnnxEmbedderOptions {
  name: string;
  /** Directory with model.onnx and vocab.txt (or tokenizer.json). */
  modelPath?: string | undefined;
  dimensions: number;
  maxBatchSize?: number | undefined;
  /** Tokens per text including [CLS] and [SEP]; default from tokenizer_config.json, else 512. */
  maxLength?: number | undefined;
}

type Ort = typeof import('onnxruntime-node');
type Session = Awaited<ReturnType<Ort['InferenceSession']['create']>>;

export function createOnnxEmbedder(options: OnnxEmbedderOptions): Embedder {
  const fail = (message: string) => new EmbeddingProviderError(`embedding model ${options.name}: ${message}`);
  if (!options.modelPath) throw fail('the onnx provider needs model_path (a directory with model.onnx)');
  const directory = resolve(options.modelPath);
  if (!existsSync(directory) || !statSync(directory).isDirectory()) {
    throw fail(`model_path ${directory} is not a directory`);
  }
  const modelFile = join(directory, 'model.onnx');
  if (!existsSync(modelFile)) throw fail(`${modelFile} is missing (the ONNX export of the model)`);
  const tokenizer = loadTokenizer(directory, options.maxLength, fail);
  const maxBatchSize = options.maxBatchSize ?? 32;

  let loading: Promise<Loaded> | undefined;
  const load = () => {
    loading ??= loadSession(modelFile, options.dimensions, fail);
    // A failed load is retried on the next call instead of being cached forever.
    loading.catch(() => {
      loading = undefined;
    });
    return loading;
  };

  async function embedBatch(texts: readonly string[]): Promise<Float32Array[]> {
    const { ort, session, inputs, integer } = await load();
    const encoded = texts.map((text) => tokenizer.encode(text));
    const seq = Math.max(...encoded.map((ids) => ids.length));
    const size = texts.length * seq;
    const make = () => (integer === 'int32' ? new Int32Array(size) : new BigInt64Array(size));
    const ids = make();
    const mask = make();
    const types = make(); // all zeros: one segment per text
    const set = (array: Int32Array | BigInt64Array, index: number, value: number) => {
      if (array instanceof BigInt64Array) array[index] = BigInt(value);
      else array[index] = value;
    };
    encoded.forEach((tokens, row) => {
      for (let column = 0; column < seq; column++) {
        const at = row * seq + column;
        set(ids, at, column < tokens.length ? (tokens[column] as number) : tokenizer.padId);
        set(mask, at, column < tokens.length ? 1 : 0);
      }
    });
    const shape = [texts.length, seq];
    const feeds: Record<string, InstanceType<Ort['Tensor']>> = {};
    const byName = { input_ids: ids, attention_mask: mask, token_type_ids: types };
    for (const input of inputs) feeds[input] = new ort.Tensor(integer, byName[input], shape);

    const outputName = session.outputNames[0] as string;
    const result = (await session.run(feeds))[outputName];
    if (!result || result.type !== 'float32') throw fail(`output ${outputName} is not a float32 tensor`);
    const data = result.data as Float32Array;
    const dims = result.dims;
    const dim = dims[dims.length - 1] as number;
    if (dim !== options.dimensions) {
      throw fail(`the model outputs ${dim} dimensions, the setting says ${options.dimensions}`);
    }
    if (dims.length === 2) {
      return texts.map((_, row) => normalize(data.slice(row * dim, (row + 1) * dim)));
    }
    if (dims.length !== 3 || dims[1] !== seq) {
      throw fail(
        `output ${outputName} has shape [${dims.join(', ')}], expected [batch, seq, dim] or [batch, dim]`,
      );
    }
    // Mean pooling over the tokens the attention mask keeps, so padding never changes a vector.
    return encoded.map((tokens, row) => {
      const vector = new Float32Array(dim);
      for (let column = 0; column < tokens.length; column++) {
        const offset = (row * seq + column) * dim;
        for (let index = 0; index < dim; index++) {
          vector[index] = (vector[index] as number) + (data[offset + index] as number);
        }
      }
      for (let index = 0; index < dim; index++) vector[index] = (vector[index] as number) / tokens.length;
      return normalize(vector);
    });
  }

  return {
    name: options.name,
    provider: 'onnx',
    dimensions: options.dimensions,
    maxBatchSize,
    async embed(texts, signal) {
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += maxBatchSize) {
        signal?.throwIfAborted();
        vectors.push(...(await embedBatch(texts.slice(start, start + maxBatchSize))));
      }
      return vectors;
    },
  };
}

interface Loaded {
  ort: Ort;
  session: Session;
  inputs: ('input_ids' | 'attention_mask' | 'token_type_ids')[];
  integer: 'int64' | 'int32';
}

const knownInputs = ['input_ids', 'attention_mask', 'token_type_ids'] as const;

async function loadSession(
  modelFile: string,
  dimensions: number,
  fail: (message: string) => Error,
): Promise<Loaded> {
  // Imported here, not at the top: the native runtime costs start-up time nobody needs
  // unless an onnx model is configured and used.
  const ort = await import('onnxruntime-node');
  let session: Session;
  try {
    session = await ort.InferenceSession.create(modelFile);
  } catch (error) {
    throw fail(`${modelFile} could not be loaded: ${(error as Error).message}`);
  }
  const unknown = session.inputNames.filter((name) => !(knownInputs as readonly string[]).includes(name));
  if (!session.inputNames.includes('input_ids') || unknown.length > 0) {
    throw fail(
      `${modelFile} takes inputs [${session.inputNames.join(', ')}]; supported are input_ids (required), attention_mask, token_type_ids`,
    );
  }
  const idsMeta = session.inputMetadata.find((meta) => meta.name === 'input_ids');
  const integer = idsMeta?.isTensor && idsMeta.type === 'int32' ? 'int32' : 'int64';
  const output = session.outputMetadata[0];
  const declared = output?.isTensor ? output.shape[output.shape.length - 1] : undefined;
  // A fixed output size is checked now; a symbolic one after the first run.
  if (typeof declared === 'number' && declared !== dimensions) {
    throw fail(`the model outputs ${declared} dimensions, the setting says ${dimensions}`);
  }
  return { ort, session, inputs: session.inputNames as Loaded['inputs'], integer };
}

export interface WordPieceTokenizer {
  padId: number;
  /** Token ids of one text: [CLS] pieces… [SEP], cut to the maximum length. */
  encode(text: string): number[];
}

function loadTokenizer(
  directory: string,
  maxLength: number | undefined,
  fail: (message: string) => Error,
): WordPieceTokenizer {
  const vocabFile = join(directory, 'vocab.txt');
  const jsonFile = join(directory, 'tokenizer.json');
  const config = readJson(join(directory, 'tokenizer_config.json'), fail) as
    | { do_lower_case?: unknown; model_max_length?: unknown }
    | undefined;
  const configured = config?.model_max_length;
  // Hugging Face writes a huge sentinel when the length is unknown; BERT models take 512.
  const limit =
    maxLength ?? (typeof configured === 'number' && configured > 2 && configured <= 8192 ? configured : 512);
  let vocab: Map<string, number>;
  let lowercase = config?.do_lower_case !== false;
  if (existsSync(vocabFile)) {
    const lines = readFileSync(vocabFile, 'utf8').split(/\r?\n/);
    if (lines.at(-1) === '') lines.pop();
    vocab = new Map(lines.map((token, id) => [token, id] as const));
  } else if (existsSync(jsonFile)) {
    const json = readJson(jsonFile, fail) as {
      model?: { type?: unknown; vocab?: unknown };
      normalizer?: { lowercase?: unknown } | null;
    };
    if (json.model?.type !== 'WordPiece' || typeof json.model.vocab !== 'object' || !json.model.vocab) {
      throw fail(`${jsonFile} is not a WordPiece tokenizer (only WordPiece/BERT tokenizers are supported)`);
    }
    vocab = new Map(Object.entries(json.model.vocab as Record<string, number>));
    if (json.normalizer?.lowercase === false) lowercase = false;
  } else {
    throw fail(
      `${vocabFile} is missing (a WordPiece vocab.txt, or tokenizer.json, is needed beside model.onnx)`,
    );
  }
  for (const special of ['[CLS]', '[SEP]', '[UNK]']) {
    if (!vocab.has(special)) throw fail(`the vocabulary in ${directory} has no ${special} token`);
  }
  return createWordPieceTokenizer(vocab, { lowercase, maxLength: limit });
}

function readJson(file: string, fail: (message: string) => Error): unknown {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw fail(`${file} is not valid JSON (${(error as Error).message})`);
  }
}

// BERT's punctuation: every ASCII non-alphanumeric printable and Unicode P*; each one is a token.
const punctuation = '\\p{P}\\x21-\\x2F\\x3A-\\x40\\x5B-\\x60\\x7B-\\x7E';
const wordPattern = new RegExp(`[${punctuation}]|\\p{Script=Han}|[^\\s${punctuation}\\p{Script=Han}]+`, 'gu');

/**
 * BERT's tokenizer: clean-up, optional lower-casing with accent stripping, splitting on
 * whitespace, punctuation and CJK characters, then greedy longest-match WordPiece with `##`
 * continuations; a word with no match (or over 100 characters) becomes [UNK].
 */
export function createWordPieceTokenizer(
  vocab: ReadonlyMap<string, number>,
  options: { lowercase: boolean; maxLength: number },
): WordPieceTokenizer {
  const cls = vocab.get('[CLS]') as number;
  const sep = vocab.get('[SEP]') as number;
  const unk = vocab.get('[UNK]') as number;
  const padId = vocab.get('[PAD]') ?? 0;
  const budget = Math.max(0, options.maxLength - 2);

  function pieces(word: string, out: number[]): void {
    if (word.length > 100) {
      out.push(unk);
      return;
    }
    const found: number[] = [];
    for (let start = 0; start < word.length; ) {
      let end = word.length;
      let id: number | undefined;
      while (start < end) {
        id = vocab.get(start > 0 ? `##${word.slice(start, end)}` : word.slice(start, end));
        if (id !== undefined) break;
        end--;
      }
      if (id === undefined) {
        out.push(unk);
        return;
      }
      found.push(id);
      start = end;
    }
    out.push(...found);
  }

  return {
    padId,
    encode(text) {
      let clean = text.replace(/[\0\uFFFD]|[\p{Cc}\p{Cf}]/gu, (char) => (/\s/.test(char) ? ' ' : ''));
      if (options.lowercase)
        clean = clean
          .toLowerCase()
          .normalize('NFD')
          .replace(/\p{Mn}/gu, '');
      const words = clean.match(wordPattern) ?? [];
      const ids: number[] = [];
      for (const word of words) {
        if (ids.length >= budget) break;
        pieces(word, ids);
      }
      return [cls, ...ids.slice(0, budget), sep];
    },
  };
}
