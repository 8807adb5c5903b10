/**
 * Memory store: the long-term memory list with its filters, and every memory action of the
 * manager — add, edit, pin, delete (then offer to remove the conversation rounds that state the
 * deleted fact), history, export and import with progress (`event.transfer`), erase everything.
 * Failures become notices (or the import's own error line); nothing typed is dropped on failure.
 * A new import or erasing everything clears the previous import report and error. Also the
 * manager's own form state: the new-memory form (`adding`, `newKind`, `newText`) and the "erase
 * everything?" question (`eraseAsked`); one item's editor and history is `MemoryItemStore`.
 *
 * Also the history import (`history.import`: a file of another assistant, routed by
 * `importRouteOf`; its report is `historyReport`) and pasted saved memories (`memory.importSaved`).
 *
 * Over 300 lines (~430): the list, its filters and every action that reloads it are one concern
 * (each action ends in `load()` with the same filters, and export, import and the erase choices
 * share the transfer and report state); the per-item state and the downloaded-models list are
 * already apart. Also: back up into a folder the user picks (`exportToFolder`).
 */
import type { MemoryHistoryRecord, MemoryView } from '../../model/records';
import { type MemoryKind, MAX_MEMORY_TEXT_CHARS, MEMORY_LIST_PAGE_SIZE } from '../../model/memory';
import type { ImportReport } from '../../model/backup';
import { t, type TranslationKey } from '../i18n/index.svelte';
import { errorKey, errorText } from '../lib/errors';
import { downloadStagedFile } from '../lib/download';
import { pickBackupFolder, saveStagedFileToFolder } from '../lib/save-to-folder';
import type { DirectoryHandleLike } from '../../platform/model-files';
import { checkImportFile, checkImportSize, importRouteOfFile, stageImportFile } from '../lib/import-file';
import type { HistoryImportReport, SavedMemoriesReport } from '../../model/history-import';
import { transferView, type TransferView } from '../lib/transfer';
import type { StoreApi } from './api';
import type { NoticesStore } from './notices.svelte';

/** The file boundaries of export/import (OPFS and the browser's download); the real ones by default. */
export interface MemoryFiles {
  /** Copies the picked file into OPFS `backups/`, reporting bytes copied. @returns the staging file name. */
  stage: (file: Blob, onProgress: (bytes: number) => void) => Promise<string>;
  /** Downloads the staged export file under `downloadName`, then deletes it. */
  download: (fileName: string, downloadName: string) => Promise<void>;
  /** Asks for a folder to back up into (`null`: cancelled). */
  pickFolder: () => Promise<DirectoryHandleLike | null>;
  /** Copies the staged export into `folder` as `saveName`, then deletes it. */
  saveToFolder: (fileName: string, saveName: string, folder: DirectoryHandleLike) => Promise<unknown>;
}

/** What the memory store needs: the api, notices, and what to refresh when memories and conversations were replaced. */
export interface MemoryStoreDeps extends StoreApi {
  notices: NoticesStore;
  /** The active profile's namespace (`ProfilesStore.namespace`): the list, new memories and imports are that profile's. */
  namespace: () => string;
  /** Re-reads the conversation list (after an import). */
  refreshConversations: () => Promise<void>;
  /**
   * Called just before "erase everything" is sent: the conversations about to vanish are the
   * user's doing, not an error (`ConversationsStore.expectAllGone`). @returns the undo, called when the erase failed.
   */
  beforeEraseAll: () => () => void;
  /** Forgets the open conversation and re-reads lists after everything was erased. */
  afterEraseAll: () => Promise<void>;
  files?: Partial<MemoryFiles>;
}

/** The list's page (`MEMORY_LIST_PAGE_SIZE` of `model/memory.ts`), under the store's name. */
export const MEMORY_PAGE_SIZE = MEMORY_LIST_PAGE_SIZE;

/** Result of an edit or pin: the list reloaded (`null` when that read failed), or `false` when the change failed. */
export type ChangeResult = readonly MemoryView[] | null | false;

/** See module doc. Created by `createMemoryStore`. */
export class MemoryStore {
  search = $state('');
  kind = $state<MemoryKind | 'all'>('all');
  includePast = $state(false);
  /** The listed memories; `null` before the first read. */
  memories = $state<MemoryView[] | null>(null);
  /** How many memories the list shows at most: `MEMORY_PAGE_SIZE`, one more page per "Show more"; back to one page when the filters change. */
  shown = $state(MEMORY_PAGE_SIZE);
  /** More memories match the filters than `memories` holds (the list offers "Show more"). */
  hasMore = $state(false);
  /** The core's message when the last list read failed. */
  listError = $state<string | null>(null);
  /** Rounds that state a fact the user just deleted (offered for removal), or `null`. */
  staleRounds = $state<MemoryView[] | null>(null);
  importing = $state(false);
  exporting = $state(false);
  /** Optional backup passphrase: a non-empty one encrypts the export (age) and opens an encrypted import. */
  passphrase = $state('');
  /** Whether the export carries the memories' vectors (a bigger file; without them the importing side embeds again). */
  includeEmbeddings = $state(true);
  /** Export the active profile only (default: every profile). */
  onlyThisProfile = $state(false);
  erasing = $state(false);
  importReport = $state<ImportReport | null>(null);
  /** The last history import's report: the format found and the counts. */
  historyReport = $state<HistoryImportReport | null>(null);
  /** Saved memories pasted in the form, and the report of the last paste. */
  pastedMemories = $state('');
  savedReport = $state<SavedMemoriesReport | null>(null);
  pasting = $state(false);
  /** The last import's failure: translated sentence, and the core's message when it refused the file. */
  importError = $state<{ title: string; detail: string | null } | null>(null);
  transfer = $state<TransferView | null>(null);
  /** The new-memory form is open. */
  adding = $state(false);
  /** Kind and text typed in the new-memory form. */
  newKind = $state<MemoryKind>('fact');
  newText = $state('');
  /** "Erase everything" asks for confirmation now. */
  eraseAsked = $state(false);

  readonly #deps: MemoryStoreDeps;
  readonly #files: MemoryFiles;
  #seq = 0;

  constructor(deps: MemoryStoreDeps) {
    this.#deps = deps;
    this.#files = {
      // Lock on: the file is sealed while staged, with a one-time key from the core (`memory.stagingKey`).
      stage: (file, onProgress) =>
        stageImportFile(file, onProgress, { stagingKey: async (fileName) => (await deps.request('memory.stagingKey', { fileName })).key }),
      download: downloadStagedFile,
      pickFolder: pickBackupFolder,
      saveToFolder: saveStagedFileToFolder,
      ...deps.files,
    };
  }

  /** Follows `event.transfer` while this panel runs an export or import. @returns the unsubscribe. */
  listen(): () => void {
    return this.#deps.subscribe('event.transfer', (p) => {
      if (this.exporting || this.importing) this.transfer = transferView(p);
    });
  }

  /**
   * Reloads the list with the current filters: up to `shown` memories (one more is asked for, to
   * know whether there are more: `hasMore`). Only the newest read is shown.
   * @returns the memories listed (at most `shown`), or `null` when the read failed.
   */
  async load(): Promise<MemoryView[] | null> {
    const mine = (this.#seq += 1);
    const shown = this.shown;
    try {
      const query = {
        namespace: this.#deps.namespace(),
        search: this.search.trim() || undefined,
        includeInvalid: this.includePast,
        kinds: this.kind === 'all' ? undefined : [this.kind],
        limit: shown + 1,
      };
      const found = await this.#deps.request('memory.list', query, { retry: true });
      const result = found.slice(0, shown);
      if (mine === this.#seq) {
        this.memories = result;
        this.hasMore = found.length > shown;
        this.listError = null;
      }
      return result;
    } catch (error) {
      if (mine === this.#seq) this.listError = errorText(error);
      return null;
    }
  }

  /**
   * Reloads the list after the filters changed: at once, or 250 ms after the last change while a
   * search is typed. Reads the filters, so an effect that calls it runs again when they change.
   * @returns the function that cancels the pending reload (the next change, or the manager closing).
   */
  loadSoon(): () => void {
    void this.kind;
    void this.includePast;
    void this.#deps.namespace(); // a profile switch lists the new profile's memories
    this.shown = MEMORY_PAGE_SIZE; // other filters: the first page again
    const timer = setTimeout(() => void this.load(), this.search ? 250 : 0);
    return () => clearTimeout(timer);
  }

  /** "Show more": lists `MEMORY_PAGE_SIZE` more memories with the same filters (the list is read again, longer). @returns as `load`. */
  showMore(): Promise<MemoryView[] | null> {
    this.shown += MEMORY_PAGE_SIZE;
    return this.load();
  }

  /** `true` when the new memory's text (trimmed) is longer than a memory may be (`MAX_MEMORY_TEXT_CHARS` characters). */
  get newTextTooLong(): boolean {
    return this.newText.trim().length > MAX_MEMORY_TEXT_CHARS;
  }

  /** `true` when the new-memory form can be saved (text not empty, not too long). */
  get canAddNew(): boolean {
    return this.newText.trim().length > 0 && !this.newTextTooLong;
  }

  /** Adds the memory typed in the new-memory form; once added, the form is emptied and closed (kept on failure). */
  async addNew(): Promise<void> {
    if (await this.add(this.newKind, this.newText)) {
      this.newText = '';
      this.adding = false;
    }
  }

  /** Adds a pinned memory (`text` trimmed) and reloads. Failures become a notice. @returns `true` when added (the caller clears its input). */
  async add(kind: MemoryKind, text: string): Promise<boolean> {
    const trimmed = text.trim();
    if (!trimmed) return false;
    try {
      await this.#deps.request('memory.add', { namespace: this.#deps.namespace(), kind, text: trimmed, pinned: true });
      await this.load();
      return true;
    } catch (error) {
      this.#deps.notices.fail('errors.memoryAddFailed', error);
      return false;
    }
  }

  async #change(action: () => Promise<unknown>): Promise<ChangeResult> {
    try {
      await action();
    } catch (error) {
      this.#deps.notices.fail('errors.memoryUpdateFailed', error);
      return false;
    }
    return this.load();
  }

  /**
   * Saves a memory's new text (trimmed) and reloads; a "Saved" notice confirms it, saying so when
   * the memory no longer matches the filters (it left the list). Failures become a notice.
   * @returns as `ChangeResult`; `false` also for empty text.
   */
  async edit(id: string, text: string): Promise<ChangeResult> {
    const trimmed = text.trim();
    if (!trimmed) return false;
    const listed = await this.#change(() => this.#deps.request('memory.update', { id, text: trimmed }));
    if (listed === false) return false;
    const hidden = listed !== null && !listed.some((m) => m.id === id);
    this.#deps.notices.notify('info', t(hidden ? 'memory.savedHidden' : 'memory.saved'));
    return listed;
  }

  /** Pins or unpins a memory and reloads. Failures become a notice. */
  setPinned(id: string, pinned: boolean): Promise<ChangeResult> {
    return this.#change(() => this.#deps.request('memory.update', { id, pinned }));
  }

  /**
   * Deletes a memory (history + tombstone in the core) and reloads; the rounds that state the
   * deleted fact are offered for removal (`staleRounds`). Failures become a notice.
   * @returns `false` when the delete failed.
   */
  async remove(id: string): Promise<ChangeResult> {
    try {
      const { rounds } = await this.#deps.request('memory.delete', { id });
      if (rounds.length > 0) this.staleRounds = rounds;
    } catch (error) {
      this.#deps.notices.fail('errors.memoryDeleteFailed', error);
      return false;
    }
    return this.load();
  }

  /** Removes the offered rounds (each a normal delete), then reloads. A failure stops there and becomes a notice. */
  async removeStaleRounds(): Promise<void> {
    const rounds = this.staleRounds ?? [];
    this.staleRounds = null;
    try {
      for (const round of rounds) await this.#deps.request('memory.delete', { id: round.id });
    } catch (error) {
      this.#deps.notices.fail('errors.memoryDeleteFailed', error);
    }
    await this.load();
  }

  /** Keeps the offered rounds (closes the offer). */
  keepStaleRounds(): void {
    this.staleRounds = null;
  }

  /** Reads a memory's history (newest 50). @throws the core's error (the item shows it in place). */
  history(memoryId: string): Promise<MemoryHistoryRecord[]> {
    return this.#deps.request('memory.history', { memoryId, limit: 50 }, { retry: true });
  }

  /**
   * Backs up into a folder the user picks (File System Access), on demand: the same export as
   * `exportAll` (passphrase and embeddings options included), written into the folder under its
   * download name. A cancelled picker does nothing; other failures become a notice.
   * @returns the name written, or `null` when nothing was.
   */
  async exportToFolder(): Promise<string | null> {
    let folder: DirectoryHandleLike | null;
    try {
      folder = await this.#files.pickFolder();
    } catch (error) {
      this.#deps.notices.fail('errors.exportFailed', error);
      return null;
    }
    if (!folder) return null;
    let saved: string | null = null;
    await this.exportAll(async (fileName, downloadName) => {
      await this.#files.saveToFolder(fileName, downloadName, folder);
      saved = downloadName;
    });
    if (saved) this.#deps.notices.notify('info', t('memory.savedToFolder', { name: saved }));
    return saved;
  }

  /**
   * Exports everything to a JSON file the browser downloads (age-encrypted when `passphrase` is
   * set); progress in `transfer`. Failures become a notice; a finished download says its file
   * name in an info notice (the browser's download indicator is outside the panel).
   * @param deliver what is done with the staged file (default: the browser's download).
   */
  async exportAll(
    deliver: (fileName: string, downloadName: string) => Promise<void> = async (f, d) => {
      await this.#files.download(f, d);
      this.#deps.notices.notify('info', t('memory.downloaded', { name: d }));
    },
  ): Promise<void> {
    this.exporting = true;
    this.transfer = { phase: 'export', fraction: 0, records: null };
    try {
      const options = {
        ...(this.passphrase ? { passphrase: this.passphrase } : {}),
        ...(this.includeEmbeddings ? {} : { includeEmbeddings: false }),
        ...(this.onlyThisProfile ? { namespace: this.#deps.namespace() } : {}),
      };
      const { fileName, downloadName } = await this.#deps.request('memory.export', Object.keys(options).length > 0 ? options : undefined, { retry: true });
      await deliver(fileName, downloadName);
    } catch (error) {
      this.#deps.notices.fail('errors.exportFailed', error);
    } finally {
      this.exporting = false;
      this.transfer = null;
    }
  }

  /** Shows, once, that an import was cut short (extension closed or restarted) and undone. @returns whether there was one. */
  async showInterruptedImport(): Promise<boolean> {
    try {
      const notice = await this.#deps.request('memory.importNotice', undefined, { retry: true });
      if (notice) this.importError = { title: t('memory.importInterrupted'), detail: null };
      return notice !== null;
    } catch {
      return false;
    }
  }

  /**
   * Imports an export file: checks its start, copies it into OPFS (`transfer` phase `upload`),
   * lets the core import it (phases `check`, `write`), shows the report, reloads memories and
   * conversations. A refused file or failure shows in `importError` (nothing written by the core).
   */
  async importFile(file: File): Promise<void> {
    this.#clearImportResult();
    this.importing = true;
    try {
      const route = await importRouteOfFile(file);
      // Another assistant's export: only its size is checked here; the core detects its format.
      const check = route === 'backup' ? await checkImportFile(file) : checkImportSize(file.size);
      if (!check.ok) {
        this.importError = { title: t(`memory.importCheck.${check.reason}`, { name: file.name, detail: check.detail ?? '' }), detail: null };
        return;
      }
      if (check.encrypted && !this.passphrase) {
        this.importError = { title: t(errorKey('backup', 'passphrase_required')), detail: null };
        return;
      }
      this.transfer = { phase: 'upload', fraction: 0, records: null };
      const fileName = await this.#files.stage(
        file,
        (bytes) => (this.transfer = { phase: 'upload', fraction: file.size > 0 ? bytes / file.size : 1, records: null }),
      );
      if (route === 'history') {
        const data = { fileName, displayName: file.name, namespace: this.#deps.namespace(), modifiedAt: file.lastModified };
        this.historyReport = await this.#deps.request('history.import', data);
      } else {
        const data = check.encrypted ? { fileName, passphrase: this.passphrase } : { fileName };
        this.importReport = await this.#deps.request('memory.import', data);
      }
      await Promise.all([this.load(), this.#deps.refreshConversations()]);
    } catch (error) {
      // A core that died mid-import undoes it when it starts again: say so rather than a bare error.
      if (!(await this.showInterruptedImport())) this.importError = { title: t('errors.importFailed'), detail: errorText(error) };
      await Promise.all([this.load(), this.#deps.refreshConversations()]).catch(() => undefined);
    } finally {
      this.importing = false;
      this.transfer = null;
    }
  }

  /**
   * Stores the pasted saved memories (`pastedMemories`, one per line or bullet) as pinned
   * memories; the report says how many were new and how many were already here. Clears the form
   * when it worked; a failure becomes a notice and the text stays.
   */
  async pasteSavedMemories(): Promise<void> {
    if (!this.pastedMemories.trim()) return;
    this.pasting = true;
    try {
      this.savedReport = await this.#deps.request('memory.importSaved', { namespace: this.#deps.namespace(), text: this.pastedMemories });
      this.pastedMemories = '';
      await this.load();
    } catch (error) {
      this.#deps.notices.fail('errors.importFailed', error);
    } finally {
      this.pasting = false;
    }
  }

  #clearImportResult(): void {
    this.historyReport = null;
    this.savedReport = null;
    this.importReport = null;
    this.importError = null;
  }

  /**
   * Erases every long-term memory of the active profile (conversations, settings and the other
   * profiles stay), reloads the list, says so and closes the question. Failures become a notice.
   * @returns `true` when erased.
   */
  eraseMemories(): Promise<boolean> {
    return this.#erase(() => this.#deps.request('memory.eraseMemories', { namespace: this.#deps.namespace() }), 'memory.erase.memoriesDone');
  }

  /** Erases all data (memories, conversations, messages, traces, jobs, settings), then says so (and closes the question). Failures become a notice. @returns `true` when erased. */
  eraseAll(): Promise<boolean> {
    return this.#erase(
      async () => {
        const undoExpect = this.#deps.beforeEraseAll();
        try {
          await this.#deps.request('memory.eraseAll');
        } catch (error) {
          undoExpect();
          throw error;
        }
      },
      'memory.erased',
      async () => {
        this.#clearImportResult();
        await this.#deps.afterEraseAll();
      },
    );
  }

  /**
   * The one erase flow: `erasing` while `erase` runs, then the stale rounds are dropped, `erased`
   * runs (what else the erase reset), the list is reloaded, the question closes and notice `doneKey`
   * says so. A failure of any step becomes the `errors.eraseFailed` notice. @returns `true` when erased.
   */
  async #erase(erase: () => Promise<void>, doneKey: TranslationKey, erased?: () => Promise<void>): Promise<boolean> {
    this.erasing = true;
    try {
      await erase();
      this.staleRounds = null;
      await erased?.();
      await this.load();
      this.eraseAsked = false;
      this.#deps.notices.notify('info', t(doneKey));
      return true;
    } catch (error) {
      this.#deps.notices.fail('errors.eraseFailed', error);
      return false;
    } finally {
      this.erasing = false;
    }
  }
}

/** Creates the memory store (nothing listed until `load`). */
export function createMemoryStore(deps: MemoryStoreDeps): MemoryStore {
  return new MemoryStore(deps);
}
