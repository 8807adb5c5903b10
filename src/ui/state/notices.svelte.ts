/**
 * The notice area's store: translated sentences with the error (translated by its code, else the
 * core's message) as a detail line.
 * Errors stay until dismissed; infos go away after 6 s.
 */
import { t, type TranslationKey } from '../i18n/index.svelte';
import { errorText, isVaultLocked } from '../lib/errors';

/** A message in the notice area. */
export interface Notice {
  id: number;
  kind: 'error' | 'info';
  /** `engine`: about loading a chat model; such notices go away once a model loads. */
  topic?: 'engine';
  /** The translated sentence. */
  text: string;
  /** The core's own message (English), shown as a smaller detail line under `text`. */
  detail?: string;
}

/** See module doc. Created by `createNoticesStore`. */
export class NoticesStore {
  /** Shown now, oldest first. */
  list = $state<Notice[]>([]);
  #seq = 0;
  readonly #infoMs: number;

  /** @param infoMs how long an info notice stays (ms). */
  constructor(infoMs: number) {
    this.#infoMs = infoMs;
  }

  /**
   * The notices to show when the errors of `inline` topics are already on screen in place (the
   * Models tab's error box for `engine`): those are left out, so no error shows twice (inline and
   * as a toast over the page). They stay in `list` and show again when the inline one is gone.
   */
  visible(inline: ReadonlySet<NonNullable<Notice['topic']>>): Notice[] {
    return inline.size === 0 ? this.list : this.list.filter((n) => !(n.kind === 'error' && n.topic && inline.has(n.topic)));
  }

  /**
   * Shows a notice.
   * @param text translated sentence.
   * @param detail untranslated detail (the core's message), shown smaller under `text`.
   */
  notify(kind: Notice['kind'], text: string, detail?: string, topic?: Notice['topic']): void {
    const notice: Notice = { id: (this.#seq += 1), kind, text };
    if (detail) notice.detail = detail;
    if (topic) notice.topic = topic;
    this.list = [...this.list, notice];
    if (kind === 'info') setTimeout(() => this.dismiss(notice.id), this.#infoMs);
  }

  /**
   * Shows an error notice: the translated context line, with the error as its detail line —
   * translated by its code when it has one (`src/ui/lib/errors.ts`), else the core's message.
   * The vault's `locked` refusal is not shown: the panel switches to its unlock screen for it.
   */
  fail(context: TranslationKey, error: unknown): void {
    if (isVaultLocked(error)) return;
    this.notify('error', t(context), errorText(error));
  }

  /** Removes a notice. */
  dismiss(id: number): void {
    this.list = this.list.filter((n) => n.id !== id);
  }

  /** Removes every notice about `topic` (e.g. earlier model-load failures once a model loaded). */
  clearTopic(topic: NonNullable<Notice['topic']>): void {
    this.list = this.list.filter((n) => n.topic !== topic);
  }
}

/**
 * Creates the notices store.
 * @param options.infoMs how long info notices stay, in ms (default 6000).
 */
export function createNoticesStore(options: { infoMs?: number } = {}): NoticesStore {
  return new NoticesStore(options.infoMs ?? 6_000);
}
