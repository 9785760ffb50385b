/**
 * The onnx provider against real onnxruntime-node sessions. No model can be downloaded here, so
 * the tests write tiny but real ONNX models: the protobuf is encoded below by hand (field
 * numbers of onnx.proto), with an embedding table whose rows are one-hot, so mean pooling gives
 * vectors whose similarity is exactly the share of tokens two texts have in common.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddersFromSettings } from './embedders.js';
import { createOnnxEmbedder, createWordPieceTokenizer } from './onnx-embedder.js';

const vocab = [
  '[PAD]',
  '[UNK]',
  '[CLS]',
  '[SEP]',
  'the',
  'cat',
  'sat',
  'on',
  'mat',
  'dog',
  'ran',
  'in',
  'park',
  '##s',
  'un',
  '##aff',
  '##able',
  '!',
  '.',
  'cafe',
];
const dim = 32;

// --- a minimal protobuf writer ---------------------------------------------------------------
type Bytes = Uint8Array;
const concat = (parts: Bytes[]): Bytes => Buffer.concat(parts);
function varint(value: number): Bytes {
  const out: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
  return Uint8Array.from(out);
}
const int = (field: number, value: number) => concat([varint(field * 8), varint(value)]);
const bytes = (field: number, body: Bytes) => concat([varint(field * 8 + 2), varint(body.length), body]);
const str = (field: number, text: string) => bytes(field, Buffer.from(text, 'utf8'));
const msg = (field: number, ...parts: Bytes[]) => bytes(field, concat(parts));

const FLOAT = 1;
const INT64 = 7;
/** ValueInfoProto{name, type: TypeProto{tensor_type{elem_type, shape{dim…}}}}. */
function valueInfo(name: string, elemType: number, shape: (number | string)[]): Bytes {
  const dims = shape.map((d) => msg(1, typeof d === 'number' ? int(1, d) : str(2, d)));
  return concat([str(1, name), msg(2, msg(1, int(1, elemType), msg(2, ...dims)))]);
}
/** NodeProto{input…, output…, op_type, attribute…}. */
function node(op: string, inputs: string[], outputs: string[], ...attributes: Bytes[]): Bytes {
  return concat([
    ...inputs.map((i) => str(1, i)),
    ...outputs.map((o) => str(2, o)),
    str(4, op),
    ...attributes,
  ]);
}
/** AttributeProto of type INTS (7) or INT (2). */
const intsAttribute = (name: string, values: number[]) =>
  msg(5, str(1, name), ...values.map((v) => int(8, v)), int(20, 7));
const intAttribute = (name: string, value: number) => msg(5, str(1, name), int(3, value), int(20, 2));

/** A one-hot embedding table [vocab, dim] as TensorProto; [PAD] has its own row, as in real models. */
function table(): Bytes {
  const values = new Float32Array(vocab.length * dim);
  for (let row = 0; row < vocab.length; row++) values[row * dim + row] = 1;
  return concat([
    int(1, vocab.length),
    int(1, dim),
    int(2, FLOAT),
    str(8, 'table'),
    bytes(9, new Uint8Array(values.buffer)),
  ]);
}

function model(graph: { nodes: Bytes[]; inputs: Bytes[]; output: Bytes }): Bytes {
  const body = concat([
    ...graph.nodes.map((n) => bytes(1, n)),
    str(2, 'tiny'),
    bytes(5, table()),
    ...graph.inputs.map((i) => bytes(11, i)),
    bytes(12, graph.output),
  ]);
  return concat([int(1, 8), msg(8, int(2, 13)), bytes(7, body)]);
}

/** input_ids -> Gather(table) -> [batch, seq, dim]: the shape of a transformer's last hidden state. */
const tokenModel = (outputDim: number | string = dim, inputName = 'input_ids') =>
  model({
    nodes: [node('Gather', ['table', inputName], ['hidden'])],
    inputs: [valueInfo(inputName, INT64, ['batch', 'seq'])],
    output: valueInfo('hidden', FLOAT, ['batch', 'seq', outputDim]),
  });

/** All three BERT inputs, pooled inside the model to [batch, dim] (ReduceMean over seq). */
const pooledModel = () =>
  model({
    nodes: [
      node('Add', ['input_ids', 'token_type_ids'], ['ids']),
      node('Gather', ['table', 'ids'], ['hidden']),
      node('ReduceMean', ['hidden'], ['pooled'], intsAttribute('axes', [1]), intAttribute('keepdims', 0)),
    ],
    inputs: [
      valueInfo('input_ids', INT64, ['batch', 'seq']),
      valueInfo('attention_mask', INT64, ['batch', 'seq']),
      valueInfo('token_type_ids', INT64, ['batch', 'seq']),
    ],
    output: valueInfo('pooled', FLOAT, ['batch', dim]),
  });

// --- fixtures -------------------------------------------------------------------------------
const root = mkdtempSync(join(tmpdir(), 'weir-onnx-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
function modelDir(files: { model?: Bytes | string; vocab?: boolean; tokenizerJson?: unknown }): string {
  const directory = join(root, `m${dirs++}`);
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory);
  if (files.model !== undefined) writeFileSync(join(directory, 'model.onnx'), files.model);
  if (files.vocab !== false) writeFileSync(join(directory, 'vocab.txt'), `${vocab.join('\n')}\n`);
  if (files.tokenizerJson)
    writeFileSync(join(directory, 'tokenizer.json'), JSON.stringify(files.tokenizerJson));
  return directory;
}

const cosine = (a: Float32Array, b: Float32Array) =>
  a.reduce((sum, value, index) => sum + value * (b[index] as number), 0);
const length = (vector: Float32Array) => Math.sqrt(cosine(vector, vector));

describe('WordPiece tokenizer', () => {
  const ids = new Map(vocab.map((token, id) => [token, id] as const));
  const tokenizer = createWordPieceTokenizer(ids, { lowercase: true, maxLength: 512 });
  const tokens = (text: string) => tokenizer.encode(text).map((id) => vocab[id]);

  it('lower-cases, strips accents, splits punctuation and continues words with ##', () => {
    expect(tokens('Unaffable CATS!')).toEqual(['[CLS]', 'un', '##aff', '##able', 'cat', '##s', '!', '[SEP]']);
    expect(tokens('  Café.\tthe\u0000 mat ')).toEqual(['[CLS]', 'cafe', '.', 'the', 'mat', '[SEP]']);
  });

  it('maps words without a full match to [UNK] and keeps [SEP] when truncating', () => {
    expect(tokens('the zebra sat')).toEqual(['[CLS]', 'the', '[UNK]', 'sat', '[SEP]']);
    const short = createWordPieceTokenizer(ids, { lowercase: true, maxLength: 4 });
    expect(short.encode('the cat sat on the mat').map((id) => vocab[id])).toEqual([
      '[CLS]',
      'the',
      'cat',
      '[SEP]',
    ]);
    expect(tokens('x'.repeat(10_000))).toEqual(['[CLS]', '[UNK]', '[SEP]']);
  });
});

describe('onnx embedder with a real onnxruntime session', () => {
  const directory = modelDir({ model: tokenModel() });
  const embedder = createOnnxEmbedder({
    name: 'tiny',
    modelPath: directory,
    dimensions: dim,
    maxBatchSize: 2,
  });

  it('embeds texts into unit vectors of the model size; shared tokens are closer', async () => {
    const [catSat, catRan, dogPark] = await embedder.embed(['the cat sat', 'the cat ran', 'dog in park']);
    for (const vector of [catSat, catRan, dogPark]) {
      expect(vector).toHaveLength(dim);
      expect(length(vector as Float32Array)).toBeCloseTo(1, 5);
    }
    const near = cosine(catSat as Float32Array, catRan as Float32Array);
    const far = cosine(catSat as Float32Array, dogPark as Float32Array);
    expect(near).toBeGreaterThan(far);
    // One-hot rows: [CLS] the cat sat [SEP] vs [CLS] the cat ran [SEP] share 4 of 5 tokens.
    expect(near).toBeCloseTo(4 / 5, 5);
    expect(far).toBeCloseTo(2 / 5, 5); // only [CLS] and [SEP]
  });

  it('gives a text the same vector alone and padded in a batch with a longer text', async () => {
    const [alone] = await embedder.embed(['cat']);
    const [padded, long] = await embedder.embed(['cat', 'the dog ran in the park on the mat!']);
    expect(Array.from(padded as Float32Array)).toEqual(Array.from(alone as Float32Array));
    expect(cosine(padded as Float32Array, long as Float32Array)).toBeLessThan(0.5);
  });

  it('splits inputs into batches of maxBatchSize and keeps the order', async () => {
    const texts = ['cat', 'dog', 'park', 'mat', 'the cat sat on the mat'];
    const together = await embedder.embed(texts);
    const oneByOne = await Promise.all(texts.map(async (text) => (await embedder.embed([text]))[0]));
    expect(together.map((vector) => Array.from(vector))).toEqual(
      oneByOne.map((vector) => Array.from(vector as Float32Array)),
    );
  });

  it('feeds attention_mask and token_type_ids when the model declares them and takes a [batch, dim] output', async () => {
    const pooled = createOnnxEmbedder({
      name: 'pooled',
      modelPath: modelDir({ model: pooledModel() }),
      dimensions: dim,
    });
    const [a, b] = await pooled.embed(['the cat sat', 'the cat sat']);
    expect(length(a as Float32Array)).toBeCloseTo(1, 5);
    expect(Array.from(a as Float32Array)).toEqual(Array.from(b as Float32Array));
    expect(cosine(a as Float32Array, (await embedder.embed(['the cat sat']))[0] as Float32Array)).toBeCloseTo(
      1,
      5,
    );
  });

  it('reads the vocabulary from tokenizer.json when there is no vocab.txt', async () => {
    const tokenizerJson = {
      model: { type: 'WordPiece', vocab: Object.fromEntries(vocab.map((token, id) => [token, id])) },
    };
    const fromJson = createOnnxEmbedder({
      name: 'json',
      modelPath: modelDir({ model: tokenModel(), vocab: false, tokenizerJson }),
      dimensions: dim,
    });
    const [viaJson] = await fromJson.embed(['Unaffable cats']);
    const [viaVocab] = await embedder.embed(['Unaffable cats']);
    expect(Array.from(viaJson as Float32Array)).toEqual(Array.from(viaVocab as Float32Array));
  });

  it('is built from the embedding_models setting', async () => {
    const catalog = createEmbeddersFromSettings([
      { name: 'minilm', provider: 'onnx', model_path: directory, dimensions: dim, max_batch_size: 8 },
    ]);
    const minilm = catalog.get('minilm');
    expect(minilm).toMatchObject({ provider: 'onnx', dimensions: dim, maxBatchSize: 8 });
    expect(await minilm?.embed(['cat'])).toHaveLength(1);
  });
});

describe('onnx embedder errors', () => {
  it('names the missing directory or file at creation', () => {
    const missing = join(root, 'nowhere');
    expect(() => createOnnxEmbedder({ name: 'm', modelPath: missing, dimensions: dim })).toThrow(
      `embedding model m: model_path ${missing} is not a directory`,
    );
    expect(() => createOnnxEmbedder({ name: 'm', dimensions: dim })).toThrow(/needs model_path/);
    const noModel = modelDir({});
    expect(() => createOnnxEmbedder({ name: 'm', modelPath: noModel, dimensions: dim })).toThrow(
      `${join(noModel, 'model.onnx')} is missing`,
    );
    const noVocab = modelDir({ model: tokenModel(), vocab: false });
    expect(() => createOnnxEmbedder({ name: 'm', modelPath: noVocab, dimensions: dim })).toThrow(
      `${join(noVocab, 'vocab.txt')} is missing`,
    );
    const bpe = modelDir({
      model: tokenModel(),
      vocab: false,
      tokenizerJson: { model: { type: 'BPE', vocab: {} } },
    });
    expect(() => createOnnxEmbedder({ name: 'm', modelPath: bpe, dimensions: dim })).toThrow(
      /is not a WordPiece tokenizer/,
    );
  });

  it('refuses a model whose output size differs from the setting, declared or found at run time', async () => {
    const declared = createOnnxEmbedder({
      name: 'm',
      modelPath: modelDir({ model: tokenModel() }),
      dimensions: 384,
    });
    await expect(declared.embed(['cat'])).rejects.toThrow(
      'embedding model m: the model outputs 32 dimensions, the setting says 384',
    );
    const symbolic = createOnnxEmbedder({
      name: 'm',
      modelPath: modelDir({ model: tokenModel('dim') }),
      dimensions: 384,
    });
    await expect(symbolic.embed(['cat'])).rejects.toThrow(
      'the model outputs 32 dimensions, the setting says 384',
    );
  });

  it('gives a clear error for a corrupt model file or inputs it cannot feed', async () => {
    const corrupt = createOnnxEmbedder({
      name: 'm',
      modelPath: modelDir({ model: 'not a model' }),
      dimensions: dim,
    });
    await expect(corrupt.embed(['cat'])).rejects.toThrow(/model\.onnx could not be loaded/);
    const image = createOnnxEmbedder({
      name: 'm',
      modelPath: modelDir({ model: tokenModel(dim, 'pixel_values') }),
      dimensions: dim,
    });
    await expect(image.embed(['cat'])).rejects.toThrow(
      /takes inputs \[pixel_values\]; supported are input_ids/,
    );
  });
});
