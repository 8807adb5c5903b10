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
 *   slots of L2-normalized f32 vectors in one contiguous `Float32Array` (`slot · dim` floats),
 *   the memory id of each slot, the slot's meta slot, and `validUntil` again, aligned with the
 *   vectors (the validity mask of the scan; time ranges are read through the meta slot).
 *   f32 is kept (not int8/f16): the exact dot product over it is what makes recall@10 = 1.0.
 * - The header (`header`): a generation counter bumped by every write, the number of memory rows
 *   the blocks describe, and the ids changed since the lexical snapshot (`dirty`).
 * - The lexical snapshot (`lexical`): MiniSearch's JSON at a generation (see `LexicalIndex`).
 *
 * In memory the blocks are the very objects read from IndexedDB: a search scans them in place.
 * Writes are copy-on-write per block (`IndexBatch`): the blocks a change touches are copied,
 * changed, written in the caller's Dexie transaction together with the memory row, and swapped
 * in only by `commit()` after that transaction committed. A failed transaction leaves the live
 * index as it was, and the persisted blocks can never disagree with the rows they were written
 * with. (Disagreement from writers that bypass the store — an import, a cleared table — is
 * detected on open by the row count and repaired: see `../store/index-sync.ts`.)
 *
 * Modules (`./blocks/`): `records` (record shapes, keys, block constructors), `scan` (dot product,
 * top-k, slot filter), `block-index` (`BlockIndex`), `batch` (`IndexBatch`), `layout`
 * (`layoutFromRows`, `indexedOf`). This file re-exports their public API.
 */

export {
  BLOCK_SLOTS,
  VECTOR_KEY_PREFIX,
  type BlockHit,
  type IndexedMemory,
  type IndexHeaderRecord,
  type LexicalSnapshotRecord,
  type MemoryIndexRecord,
  type MemoryMeta,
  type MetaBlockRecord,
  type ScanFilter,
  type VectorBlockRecord,
} from './blocks/records';
export { exactTopK } from './blocks/scan';
export { BlockIndex } from './blocks/block-index';
export { IndexBatch } from './blocks/batch';
export { indexedOf, layoutFromRows, memorySlotLabel, type LayoutRow } from './blocks/layout';
