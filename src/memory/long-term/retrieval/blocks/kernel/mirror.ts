/**
 * The quantized mirror of one vector segment: the int8 codes of its vectors (`./quantize.ts`) in
 * one WebAssembly memory, block by block, and the kernel (`./scan.wat`) that turns a query into
 * a `[lo, hi]` bound on every slot's exact score. `BlockIndex.search` keeps the k best lower
 * bounds and rescores in f32 only the slots whose upper bound reaches the k-th of them: exactly
 * the hits of the full f32 scan (see `BlockIndex.search`).
 *
 * Layout of the memory (bytes): the query's i16 codes at 0 (`2·stride`, rounded up to 64), a
 * scratch area for the f32 floats `encode` reads (`BLOCK_SLOTS · dim · 4`), then per block `b` one area of `BLOCK_SLOTS · (stride + 20)` bytes at `QUERY_BYTES + b · area`:
 * at `base + b · area`: codes (`BLOCK_SLOTS · stride`), constants (`BLOCK_SLOTS · 12`: scale, errNorm, codeNorm as f32),
 * bounds written by the kernel (`BLOCK_SLOTS · 8`: lo, hi as f32). At 384-d: 404 bytes per slot,
 * 0.26× the f32 vectors (plus the 384 KiB scratch); the memory grows in whole blocks and never shrinks (a segment's blocks
 * never go away either).
 *
 * The mirror follows the live blocks by identity: writes are copy-on-write (`IndexBatch`), so a
 * changed block is a new object, and `sync` recodes the slots of the blocks whose object changed
 * (comparing each slot's floats with the block it coded before: an unchanged slot keeps its codes).
 */
import { BLOCK_SLOTS, type VectorBlockRecord } from '../records';
import { instantiateScanKernel, type ScanKernelExports } from './kernel';
import { codeStride, META_FLOATS, quantizeQuery } from './quantize';

const PAGE = 65536;

/** See the module doc. */
export class QuantizedMirror {
  readonly stride: number;
  private readonly queryBytes: number;
  /** Byte offset of the first block area (after the query and the scratch floats). */
  private readonly base: number;
  private readonly area: number;
  private readonly memory: WebAssembly.Memory;
  private readonly kernel: ScanKernelExports;
  /** The block object each area was last coded from. */
  private readonly coded: (VectorBlockRecord | undefined)[] = [];
  private buffer: ArrayBuffer | null = null;
  private f32 = new Float32Array(0);
  private i16 = new Int16Array(0);

  /**
   * @param dim floats per vector of the segment, a positive multiple of 16 (`QuantizedMirror.supports`).
   * @throws Error when the kernel is unavailable (`scanKernelModule()` null) or `dim` is not supported.
   */
  constructor(readonly dim: number) {
    if (!QuantizedMirror.supports(dim)) throw new Error(`QuantizedMirror: dimension ${dim} is not a positive multiple of 16`);
    this.stride = codeStride(dim);
    this.queryBytes = Math.ceil((2 * this.stride) / 64) * 64;
    this.base = this.queryBytes + BLOCK_SLOTS * dim * 4;
    this.area = BLOCK_SLOTS * (this.stride + 4 * META_FLOATS + 8);
    this.memory = new WebAssembly.Memory({ initial: 1 });
    this.kernel = instantiateScanKernel(this.memory);
  }

  /** Whether vectors of `dim` floats can be coded (`encode` reads 16 floats at a time): 384, 512, 768, 1024 … can. */
  static supports(dim: number): boolean {
    return Number.isInteger(dim) && dim > 0 && dim % 16 === 0;
  }

  /** Bytes of WebAssembly memory held (whole 64 KiB pages). */
  get bytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** Typed views over the memory, re-made after a `grow` detached the old buffer. */
  private views(): void {
    if (this.buffer === this.memory.buffer) return;
    this.buffer = this.memory.buffer;
    this.f32 = new Float32Array(this.buffer);
    this.i16 = new Int16Array(this.buffer);
  }

  private codesAt = (b: number) => this.base + b * this.area;
  private metaAt = (b: number) => this.codesAt(b) + BLOCK_SLOTS * this.stride;
  private boundsAt = (b: number) => this.metaAt(b) + BLOCK_SLOTS * 4 * META_FLOATS;

  /**
   * Brings the codes up to date with `blocks` (the segment's live blocks, all `dim` floats per
   * slot): grows the memory to hold every block, recodes the changed slots of the blocks whose
   * object is not the one last coded. O(changed blocks · BLOCK_SLOTS · dim).
   */
  sync(blocks: readonly VectorBlockRecord[]): void {
    const need = this.base + blocks.length * this.area;
    if (need > this.memory.buffer.byteLength) this.memory.grow(Math.ceil((need - this.memory.buffer.byteLength) / PAGE));
    this.views();
    const dim = this.dim;
    const scratch = this.queryBytes;
    for (let b = 0; b < blocks.length; b += 1) {
      const block = blocks[b]!;
      const old = this.coded[b];
      if (old === block) continue;
      const codes = this.codesAt(b);
      const meta = this.metaAt(b);
      if (!old) {
        this.f32.set(block.vectors, scratch >> 2);
        this.kernel.encode(scratch, BLOCK_SLOTS, dim, codes, this.stride, meta);
      } else {
        for (let s = 0; s < BLOCK_SLOTS; s += 1) {
          if (sameSlot(old, block, s, dim)) continue;
          this.f32.set(block.vectors.subarray(s * dim, (s + 1) * dim), scratch >> 2);
          this.kernel.encode(scratch, 1, dim, codes + s * this.stride, this.stride, meta + s * 4 * META_FLOATS);
        }
      }
      this.coded[b] = block;
    }
  }

  /**
   * Writes the bounds of slots `[0, slots)` (`slots` ≤ 256 · the blocks last synced) against `q`
   * (`dim` finite floats): read them with `boundsOf`.
   * @throws RangeError when `q` has a non-finite component.
   */
  score(q: Float32Array, slots: number): void {
    this.views();
    const code = quantizeQuery(q, this.i16.subarray(0, this.stride));
    for (let b = 0; b * BLOCK_SLOTS < slots; b += 1) {
      const n = Math.min(BLOCK_SLOTS, slots - b * BLOCK_SLOTS);
      this.kernel.bounds(this.codesAt(b), this.metaAt(b), this.boundsAt(b), n, this.stride, 0, code.scale, code.norm, code.errNorm, code.slack);
    }
  }

  /**
   * Like `score`, for the listed blocks only (ascending block numbers, each below the blocks last
   * synced): their bounds for all `BLOCK_SLOTS` slots. For a list of members spread over a few blocks.
   * @throws RangeError when `q` has a non-finite component.
   */
  scoreBlocks(q: Float32Array, blocks: readonly number[]): void {
    this.views();
    const code = quantizeQuery(q, this.i16.subarray(0, this.stride));
    for (const b of blocks)
      this.kernel.bounds(this.codesAt(b), this.metaAt(b), this.boundsAt(b), BLOCK_SLOTS, this.stride, 0, code.scale, code.norm, code.errNorm, code.slack);
  }

  /** The bounds of block `b` from the last `score`: `lo` of slot `s` at `2s`, `hi` at `2s + 1` (a view, valid until the next `sync`). */
  boundsOf(b: number): Float32Array {
    this.views();
    return this.f32.subarray(this.boundsAt(b) >> 2, (this.boundsAt(b) >> 2) + 2 * BLOCK_SLOTS);
  }
}

/** Whether slot `s` holds the same floats in both blocks (a copy-on-write copy leaves untouched slots bit-identical). */
function sameSlot(a: VectorBlockRecord, b: VectorBlockRecord, s: number, dim: number): boolean {
  if (a.scales[s] !== b.scales[s]) return false;
  const x = a.vectors;
  const y = b.vectors;
  for (let i = s * dim, end = i + dim; i < end; i += 1) if (x[i] !== y[i]) return false;
  return true;
}
