/**
 * The import report as sentences by meaning. The core's `ImportReport` counts records of every
 * kind together (memories, their history entries, conversations, messages; see
 * `src/backup/`): `added` = not here before, `updated` = the file held a newer version,
 * `skipped` = already here in the same or a newer version (or a memory with the same text), i.e.
 * already up to date, `errors` = records that could not be merged (core text, English), and
 * `vectorsDropped` = memories whose vector was unusable (re-embedded; a line of its own), and
 * `forgotten` = memories left out because the user deleted or forgot them here (part of `skipped`,
 * shown on a line of its own instead of "up to date").
 * Pure; returns translation keys for unit tests.
 */
import type { ImportReport } from '../../model/backup';
import type { TranslationKey } from '../i18n/instance';

/** One line of the report: a translated sentence with its plural count. */
export interface ImportReportLine {
  key: TranslationKey;
  count: number;
}

/** The report's title line, and one line per non-zero count, in the order added → updated → up to date → rejected. */
export interface ImportReportView {
  title: TranslationKey;
  lines: ImportReportLine[];
  /** The core's messages about rejected records (shown as details under the `rejected` line). */
  errors: string[];
}

/**
 * Builds the report view. Zero counts are left out. The title says whether the import changed
 * anything: `title` (something added or updated), `titleNothingNew` (every record was already up
 * to date: the file had been imported before), `titleWithErrors` (some records were rejected),
 * `titleEmpty` with the single line `empty` (a file without any record).
 */
export function importReportView(report: ImportReport): ImportReportView {
  const lines: ImportReportLine[] = [];
  if (report.added > 0) lines.push({ key: 'memory.importReport.added', count: report.added });
  if (report.updated > 0) lines.push({ key: 'memory.importReport.updated', count: report.updated });
  const forgotten = report.forgotten ?? 0;
  if (report.skipped - forgotten > 0) lines.push({ key: 'memory.importReport.upToDate', count: report.skipped - forgotten });
  if (forgotten > 0) lines.push({ key: 'memory.importReport.forgotten', count: forgotten });
  if (report.errors.length > 0) lines.push({ key: 'memory.importReport.rejected', count: report.errors.length });
  if ((report.vectorsDropped ?? 0) > 0) lines.push({ key: 'memory.importReport.vectorsDropped', count: report.vectorsDropped! });
  if (lines.length === 0) lines.push({ key: 'memory.importReport.empty', count: 0 });
  const empty = lines[0]?.key === 'memory.importReport.empty';
  const title: TranslationKey = empty
    ? 'memory.importReport.titleEmpty'
    : report.errors.length > 0
      ? 'memory.importReport.titleWithErrors'
      : report.added + report.updated > 0
        ? 'memory.importReport.title'
        : 'memory.importReport.titleNothingNew';
  return { title, lines, errors: report.errors.slice() };
}
