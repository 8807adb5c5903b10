/**
 * What the Memory tab's transfer progress bar shows (export, copying a picked file, and the core's
 * two import passes), from the core's `event.transfer` (pure: no state).
 */
import type { TransferProgress } from '../../model/backup';

/**
 * Progress of the export or import running now; `upload` = copying the picked file into OPFS.
 * `fraction` in 0…1. `records` (import only): records checked so far (`check`, whose total is
 * not known yet: `total` is `null`) or written of the file's total (`write`); `null` otherwise.
 */
export interface TransferView {
  phase: TransferProgress['phase'] | 'upload';
  fraction: number;
  records: { done: number; total: number | null } | null;
}

/** What the progress bar shows for a core's `event.transfer` (see `TransferView`). */
export function transferView(p: TransferProgress): TransferView {
  const fraction = p.total > 0 ? Math.min(1, p.done / p.total) : 0;
  const records =
    p.phase === 'check' ? { done: p.records ?? 0, total: null } : p.phase === 'write' ? { done: Math.min(p.done, p.total), total: p.total } : null;
  return { phase: p.phase, fraction, records };
}

/**
 * The records part of the progress line as a translation key and its options (`count` picks the
 * plural form, `n` and `done` are the formatted numbers), or `null` when there is none (export,
 * upload). `format` formats a count for the UI language (e.g. `formatCount`).
 */
export function transferRecordsText(
  view: TransferView,
  format: (n: number) => string,
): { key: 'memory.transfer.recordsChecked' | 'memory.transfer.recordsWritten'; options: { count: number; n: string; done?: string } } | null {
  if (!view.records) return null;
  const { done, total } = view.records;
  if (total === null) return { key: 'memory.transfer.recordsChecked', options: { count: done, n: format(done) } };
  return { key: 'memory.transfer.recordsWritten', options: { count: total, n: format(total), done: format(done) } };
}
