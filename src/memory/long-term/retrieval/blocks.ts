/**
 * The persisted layout of the long-term index (Dexie table `memoryIndex`, schema v3): what a
 * search needs about every memory, in a few fixed-size binary blocks that open without a rebuild.
 *
 * - Meta blocks (`m|<namespace>|<n>`): per namespace, `BLOCK_SLOTS` slots of columns aligned by
 *   slot — memory id, createdAt / updatedAt / validFrom / validUntil (ms epoch as float64; `NaN`
 *   for `null`), importance (float32), pinned (uint8), the row's `current` flag (uint8), kind, slot label
 *   (`memorySlotLabel`) and the normalized text (`normalizeMemoryText`). Filtering (namespace, validity, time
 *   range), recency/importance weighting and the memory manager's catalog (`BlockIndex.catalog`:
 *   list, filter, substring match) read these columns, never the memory rows. A meta block written
 *   before the `current` / `normalized` columns existed is detected on open (`BlockIndex.outdated`)
 *   and the layout repaired from the rows.
 * - Vector blocks (`v|<model>|<namespace>|<n>`): per embedding model and namespace, `BLOCK_SLOTS`
 *   slots of L2-normalized vectors in one contiguous array (`slot · dim` components), the memory
 *   id of each slot, the slot's meta slot, and `validUntil` again, aligned with the vectors (the
 *   validity mask of the scan; time ranges are read through the meta slot). Stored as f16 bits
 *   (`StoredVectorBlockRecord.halves`, schema v4: half the bytes of f32) and decoded at open into
 *   one `Float32Array` per block, which the exact scan reads; a vector is rounded to f16 when it
 *   is put (`IndexBatch.put`), so the live index equals what a restart reads back. The scan stays
 *   exact over those values (no rescoring needed: the top-10 over f16-rounded vectors equals the
 *   top-10 over the f32 originals on the retrieval benchmark and in `tests/unit/ltm-f16.test.ts`).
 * - The header (`header`): a generation counter bumped by every write, the number of memory rows
 *   the blocks describe, and the ids changed since the lexical snapshot (`dirty`).
 * - The lexical snapshot (`lexical`, and its chunks `lexical|<n>`): MiniSearch's index at a generation,
 *   in chunks of documents (see `./lexical-snapshot.ts`; a single-record JSON snapshot of an older build still loads).
 *
 * In memory the meta blocks are the very objects read from IndexedDB, and a vector block is its
 * stored record with the f16 bits decoded (`decodeVectorBlock`): a search scans them in place.
 * Writes are copy-on-write per block (`IndexBatch`): the blocks a change touches are copied,
 * changed, written in the caller's Dexie transaction together with the memory row, and swapped
 * in only by `commit()` after that transaction committed. A failed transaction leaves the live
 * index as it was, and the persisted blocks can never disagree with the rows they were written
 * with. (Disagreement from writers that bypass the store — an import, a cleared table — is
 * detected on open by the row count and repaired: see `../store/index-sync.ts`.)
 *
 * Modules (`./blocks/`): `records` (record shapes, keys, block constructors, the vector-block codec), `f16` (half floats), `scan` (dot product,
 * top-k, the listing heap, slot filter), `kernel/` (the scan's WebAssembly SIMD kernel: an int8 mirror of each large
 * vector segment whose bounds let `BlockIndex.search` rescore only the slots that can be in the top-k — exact), `time-bounds` (per-block time bounds a range walk skips
 * by), `block-index` (`BlockIndex`), `batch` (`IndexBatch`), `layout` (`layoutFromRows`,
 * `indexedOf`). This file re-exports their public API.
 */

export {
  BLOCK_SLOTS,
  META_KEY_PREFIX,
  VECTOR_KEY_PREFIX,
  type BlockHit,
  type IndexedMemory,
  type DirtyIdsRecord,
  type IndexHeaderRecord,
  type LexicalChunkRecord,
  type LexicalManifestRecord,
  type LexicalSnapshotHead,
  type LexicalSnapshotRecord,
  type MemoryIndexRecord,
  type MemoryMeta,
  type MetaBlockRecord,
  type ScanFilter,
  type VectorBlockRecord,
  type StoredVectorBlockRecord,
  decodeVectorBlock,
  encodeVectorBlock,
  isVectorRecord,
} from './blocks/records';
export { exactTopK } from './blocks/scan';
export { BlockIndex, compareIds } from './blocks/block-index';
export { IndexBatch } from './blocks/batch';
export { indexedOf, layoutFromRows, memorySlotLabel, type LayoutRow } from './blocks/layout';
