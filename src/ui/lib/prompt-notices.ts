/**
 * The context view's notices about one prompt (`PromptTrace.notices`, set by the core): a
 * translated sentence per stable code, its parameters, and the core's English text (a summarizer
 * rejection reason) only as a detail line. Pure; returns translation keys for unit tests.
 */
import type { PromptNotice } from '../../prompt/types';
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
}

/**
 * Converts the trace's notices into what the context view shows, in the core's order. Traces
 * stored by older versions have no `notices` (→ `[]`). Notices with an unknown code (a newer core)
 * are left out rather than shown untranslated.
 */
export function promptNoticeViews(notices: readonly PromptNotice[] | undefined): PromptNoticeView[] {
  const out: PromptNoticeView[] = [];
  for (const notice of notices ?? []) {
    if (notice.code === 'summary_pending') {
      const detail = notice.lastError && notice.lastError.trim() ? notice.lastError.trim() : null;
      out.push({
        code: notice.code,
        key: 'context.notice.summary_pending',
        params: { count: Math.max(0, Math.trunc(notice.messages)) },
        detail,
        detailLabel: detail ? 'context.notice.rejectedBecause' : null,
      });
    } else if (notice.code === 'keyword_memory_only') {
      out.push({ code: notice.code, key: 'context.notice.keyword_memory_only', params: {}, detail: null, detailLabel: null });
    }
  }
  return out;
}
