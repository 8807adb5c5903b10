/**
 * Reading a backup file: record by record from a `Blob` with a streaming JSON parser
 * (`@streamparser/json`), or whole from a string (small files, tests).
 */
import { JSONParser } from '@streamparser/json';
import type { z } from 'zod';
import {
  EXPORT_FORMAT,
  exportFileSchema,
  ImportError,
  READABLE_VERSIONS,
  refuse,
  SECTION_SCHEMAS,
  SECTIONS,
  time,
  versionParams,
  type ExportFile,
  type FileEntity,
  type FileFeedback,
  type FileRejectedSuggestion,
  type FileProfile,
  type FileSetting,
  type FileStrategyState,
  type Section,
} from './format';

/**
 * Parses and validates a whole export file held as one string, without writing anything (small
 * files; `importAll` streams instead).
 * @throws ImportError for invalid JSON, another format, another version, or invalid records
 *   (the message names up to five problems with their JSON paths).
 */
export function parseExportFile(json: string): z.infer<typeof exportFileSchema> {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (error) {
    throw new ImportError('invalid_json', `The file is not valid JSON (${(error as Error).message}). Nothing was imported.`, { cause: error });
  }
  if (typeof data !== 'object' || data === null || (data as { format?: unknown }).format !== EXPORT_FORMAT) {
    throw new ImportError('not_backup', 'This is not a Recall export file (missing "format": "recall-export"). Nothing was imported.');
  }
  const version = (data as { version?: unknown }).version;
  if (!READABLE_VERSIONS.includes(version as number)) {
    throw new ImportError(
      'unsupported_version',
      `This export file has version ${JSON.stringify(version)}; this version of Recall reads versions ${READABLE_VERSIONS.join(' and ')}. Nothing was imported.`,
      { params: versionParams(version) },
    );
  }
  const parsed = exportFileSchema.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    const more = parsed.error.issues.length > 5 ? ` (and ${parsed.error.issues.length - 5} more)` : '';
    throw new ImportError('damaged', `The export file is damaged: ${problems.join('; ')}${more}. Nothing was imported.`, {
      params: { problems: `${problems.join('; ')}${more}` },
    });
  }
  return parsed.data;
}

/** A validated record of one section of the file. */
export type FileRecord =
  | { section: 'memories'; index: number; value: ExportFile['memories'][number] }
  | { section: 'memoryHistory'; index: number; value: ExportFile['memoryHistory'][number] }
  | { section: 'conversations'; index: number; value: ExportFile['conversations'][number] }
  | { section: 'messages'; index: number; value: ExportFile['messages'][number] }
  | { section: 'entities'; index: number; value: FileEntity }
  | { section: 'strategyState'; index: number; value: FileStrategyState }
  | { section: 'settings'; index: number; value: FileSetting }
  | { section: 'feedback'; index: number; value: FileFeedback }
  | { section: 'rejectedSuggestions'; index: number; value: FileRejectedSuggestion }
  | { section: 'profiles'; index: number; value: FileProfile };

/**
 * Reads an export file record by record with a streaming JSON parser: `onRecords` gets the
 * validated records parsed from each piece of the file (awaited before the next piece is read,
 * so memory holds one piece and its records). A missing section counts as empty.
 * @param onBytes called after each piece with bytes read so far.
 * @throws ImportError for invalid or cut-off JSON, another format or version, a section that is
 *   not a list, or a record that fails its schema (named by its JSON path).
 */
export async function readExportRecords(source: Blob, onRecords: (records: FileRecord[]) => Promise<void>, onBytes?: (bytes: number) => void): Promise<void> {
  let format: unknown;
  let version: unknown;
  let pending: FileRecord[] = [];
  let problem: ImportError | null = null;
  const checkHeader = () => {
    if (format !== undefined && format !== EXPORT_FORMAT) throw refuse('not_backup', 'This is not a Recall export file (missing "format": "recall-export").');
    if (version !== undefined && !READABLE_VERSIONS.includes(version as number)) {
      throw refuse(
        'unsupported_version',
        `This export file has version ${JSON.stringify(version)}; this version of Recall reads versions ${READABLE_VERSIONS.join(' and ')}.`,
        versionParams(version),
      );
    }
  };
  const parser = new JSONParser({
    paths: ['$.format', '$.version', '$.exportedAt', '$.embeddingModel', ...SECTIONS.map((s) => `$.${s}.*`)],
    keepStack: false,
    stringBufferSize: 0,
  });
  parser.onValue = ({ value, key, stack }) => {
    if (problem) return;
    try {
      if (stack.length === 1) {
        if (key === 'format') format = value;
        else if (key === 'version') version = value;
        else if (key === 'exportedAt' && !time.safeParse(value).success)
          throw refuse('damaged', 'The export file is damaged: exportedAt is not a time.', { problems: 'exportedAt' });
        else if (key === 'embeddingModel' && value !== null && typeof value !== 'string')
          throw refuse('damaged', 'The export file is damaged: embeddingModel is not a model id.', { problems: 'embeddingModel' });
        checkHeader();
        return;
      }
      const section = stack[1]?.key as Section;
      if (typeof key !== 'number') throw refuse('damaged', `The export file is damaged: "${section}" is not a list.`, { problems: section });
      const parsed = SECTION_SCHEMAS[section].safeParse(value);
      if (!parsed.success) {
        const problems = parsed.error.issues.slice(0, 5).map((i) => `${[section, key, ...i.path].join('.')}: ${i.message}`);
        throw refuse('damaged', `The export file is damaged: ${problems.join('; ')}.`, { problems: problems.join('; ') });
      }
      pending.push({ section, index: key, value: parsed.data } as FileRecord);
    } catch (error) {
      problem = error instanceof ImportError ? error : refuse('unreadable', `The file could not be read (${(error as Error).message}).`);
    }
  };
  parser.onError = (error) => {
    problem ??= new ImportError('invalid_json', `The file is not valid JSON (${error.message}). Nothing was imported.`, { cause: error });
  };
  const reader = source.stream().getReader();
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (!parser.isEnded) parser.write(value);
      else if (new TextDecoder().decode(value).trim() !== '')
        problem ??= new ImportError('trailing_data', 'The file has data after its end. Nothing was imported.');
      if (problem) throw problem;
      if (pending.length > 0) {
        const records = pending;
        pending = [];
        await onRecords(records);
      }
      onBytes?.(bytes);
    }
  } finally {
    reader.releaseLock();
  }
  if (bytes === 0) throw refuse('empty', 'The file is empty.');
  if (!parser.isEnded) throw refuse('cut_off', 'The file is cut off (it ends in the middle of the data) or is not valid JSON.');
  if (format === undefined) throw refuse('not_backup', 'This is not a Recall export file (missing "format": "recall-export").');
  if (version === undefined) throw refuse('damaged', 'The export file has no version.', { problems: 'version' });
}
