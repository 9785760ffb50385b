/**
 * Float32 storage for the in-memory vectors (vector-memory.ts) with one WebAssembly SIMD
 * function over it: `axpy(dots, column, count, value)` sets dots[i] = f32(dots[i] +
 * f32(column[i] * value)) for i < count, four slots per instruction. Each lane is one slot,
 * so every slot's sum is still taken in dimension order; f32x4.mul and f32x4.add round as
 * IEEE single precision, as Math.fround does, so the results are those of the scalar loop to
 * the last bit (memory-search.test.ts checks them against PGlite's `<=>`). The module is 118
 * bytes written out below (no toolchain, no file); where WebAssembly SIMD does not validate,
 * the store is a plain Float32Array and the caller runs the scalar loop.
 */

/** An unsigned LEB128 integer, as WebAssembly encodes sizes and indexes. */
function leb(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  do {
    let byte = rest & 0x7f;
    rest >>>= 7;
    if (rest !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (rest !== 0);
  return bytes;
}

function section(id: number, contents: number[]): number[] {
  return [id, ...leb(contents.length), ...contents];
}

const [I32, F32, V128] = [0x7f, 0x7d, 0x7b];
const SIMD = 0xfd;
/** v128.load / v128.store with a 4-byte alignment hint and offset 0. */
const memarg = [2, 0];

/** (param $dots i32) (param $column i32) (param $count i32) (param $value f32) (local $splat v128) */
const axpyBody = [
  ...[1, 1, V128],
  ...[0x20, 3, SIMD, 0x13, 0x21, 4], // splat = f32x4.splat(value)
  ...[0x02, 0x40, 0x03, 0x40], // block, loop
  ...[0x20, 2, 0x45, 0x0d, 1], // if count == 0: break
  ...[0x20, 0], // the store's address: dots
  ...[0x20, 0, SIMD, 0x00, ...memarg], // v128.load dots
  ...[0x20, 1, SIMD, 0x00, ...memarg], // v128.load column
  ...[0x20, 4, SIMD, ...leb(0xe6)], // f32x4.mul column * splat
  ...[SIMD, ...leb(0xe4)], // f32x4.add dots + product
  ...[SIMD, 0x0b, ...memarg], // v128.store
  ...[0x20, 0, 0x41, 16, 0x6a, 0x21, 0], // dots += 16
  ...[0x20, 1, 0x41, 16, 0x6a, 0x21, 1], // column += 16
  ...[0x20, 2, 0x41, 4, 0x6b, 0x21, 2], // count -= 4
  ...[0x0c, 0, 0x0b, 0x0b, 0x0b], // continue; end loop, block, function
];

const axpyModuleBytes = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  ...section(1, [1, 0x60, 4, I32, I32, I32, F32, 0]),
  // import "m" "mem" (memory 1)
  ...section(2, [1, 1, 0x6d, 3, 0x6d, 0x65, 0x6d, 0x02, 0x00, 1]),
  ...section(3, [1, 0]),
  ...section(7, [1, 4, 0x61, 0x78, 0x70, 0x79, 0x00, 0]),
  ...section(10, [1, ...leb(axpyBody.length), ...axpyBody]),
]);

/**
 * Node's WebAssembly, which the service's TypeScript libraries (ES2023, node) do not declare
 * (pglite-worker.ts declares its part the same way): the parts used here.
 */
interface WasmModule {
  readonly kind?: 'WebAssembly.Module';
}
declare const WebAssembly: {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => WasmModule;
  Memory: new (descriptor: { initial: number }) => { readonly buffer: ArrayBuffer };
  Instance: new (
    module: WasmModule,
    imports: Record<string, Record<string, unknown>>,
  ) => { readonly exports: Record<string, unknown> };
};

let compiled: WasmModule | null | undefined;

function axpyModule(): WasmModule | null {
  if (compiled === undefined) {
    compiled = WebAssembly.validate(axpyModuleBytes) ? new WebAssembly.Module(axpyModuleBytes) : null;
  }
  return compiled;
}

export type Axpy = (dotsByteOffset: number, columnByteOffset: number, count: number, value: number) => void;

export interface Float32Store {
  floats: Float32Array;
  /** Undefined without WebAssembly SIMD: the caller loops in JavaScript. */
  axpy: Axpy | undefined;
}

/** `length` float32s, zeroed, in a WebAssembly memory that axpy works on when it can. */
export function float32Store(length: number, simd = true): Float32Store {
  const module = simd ? axpyModule() : null;
  if (!module) return { floats: new Float32Array(length), axpy: undefined };
  const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil((length * 4) / 65536)) });
  const instance = new WebAssembly.Instance(module, { m: { mem: memory } });
  return { floats: new Float32Array(memory.buffer, 0, length), axpy: instance.exports.axpy as Axpy };
}
