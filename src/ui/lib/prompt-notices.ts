/**
 * The context view's notices about one prompt (`PromptTrace.notices`, set by the core): a
 * translated sentence per stable code, its parameters, and the core's English text (a summarizer
 * rejection reason) only as a detail line. Pure; returns translation keys for unit tests.
 */
import type { PromptNotice, PromptTrace } from '../../model/trace';
import type { TranslationKey } from '../i18n/instance';

/** What the context view shows for one notice. */
export interface PromptNoticeView {
  /** Stable code (also the element's `data-code`). */
  code: PromptNotice['code'];
  /** The sentence (`context.notice.<code>`). */
  key: TranslationKey;
  /** Its interpolation values (`count`: messages still verbatim, for plural forms). */
  params: Record<string, number>;
  /** Why the last summarizer reply was rejected (core text, English), or `null`. */
  detail: string | null;
  /** Translated label in front of `detail` (`context.notice.rejectedBecause`), or `null` without a detail. */
  detailLabel: TranslationKey | null;
  /** A second sentence (how many of the pending messages the context window left out), or `null`. */
  note: { key: TranslationKey; params: Record<string, number> } | null;
}

/**
 * Converts the trace's notices into what the context view shows, in the core's order. Traces
 * stored by older versions have no `notices` (→ `[]`). Notices with an unknown code (a newer core)
 * are left out rather than shown untranslated.
 *
 * `summary_pending` reads per strategy: with summary + buffer the pending messages are the
 * oldest of the buffer, over the strategy's token limit (`context.notice.summary_pending`); with
 * the running summary there is no such limit, they are simply not summarized yet
 * (`context.notice.summary_behind`). The prompt assembler leaves out the oldest recent turns
 * first when the context window is full, so the pending messages it left out are
 * `min(pending, recent section's dropped)`; a note says so, and the counts agree with the section list.
 * @param trace the trace's strategy and sections (optional: without them, summary + buffer wording, no note).
 */
export function promptNoticeViews(notices: readonly PromptNotice[] | undefined, trace?: Pick<PromptTrace, 'strategy' | 'sections'>): PromptNoticeView[] {
  const out: PromptNoticeView[] = [];
  const recentDropped = trace?.sections.find((s) => s.kind === 'recent')?.dropped ?? 0;
  for (const notice of notices ?? []) {
    if (notice.code === 'summary_pending') {
      const detail = notice.lastError && notice.lastError.trim() ? notice.lastError.trim() : null;
      const count = Math.max(0, Math.trunc(notice.messages));
      const leftOut = Math.min(count, Math.max(0, recentDropped));
      out.push({
        code: notice.code,
        key: trace?.strategy.kind === 'summary' ? 'context.notice.summary_behind' : 'context.notice.summary_pending',
        params: { count },
        detail,
        detailLabel: detail ? 'context.notice.rejectedBecause' : null,
        note: leftOut > 0 ? { key: 'context.notice.pendingLeftOut', params: { count: leftOut } } : null,
      });
    } else if (notice.code === 'keyword_memory_only') {
      out.push({ code: notice.code, key: 'context.notice.keyword_memory_only', params: {}, detail: null, detailLabel: null, note: null });
    }
  }
  return out;
}
