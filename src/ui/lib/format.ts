/**
 * Pure formatters for the side panel: sizes, percentages, token counts, dates and load
 * progress. Every function takes the UI locale explicitly (a BCP 47 tag such as `en` or
 * `zh-CN`) and formats with the platform's `Intl` APIs, so Chinese and English users get
 * their own digit grouping, date order and relative-time phrases.
 */
import type { LoadProgress } from '../../model/engine';

/** Bytes in one kilobyte / megabyte / gigabyte. Decimal SI units (1 MB = 1,000,000 bytes), matching the `MB` label. */
const KB = 1_000;
const MB = 1_000_000;
const GB = 1_000_000_000;

/**
 * Formats a size in bytes with a decimal SI unit: `B` below 1 kB, then `KB`, `MB`, `GB`.
 * One decimal below 10 of a unit, none above (e.g. `1.2 MB`, `350 MB`, `4.1 GB`).
 * @param bytes non-negative byte count; negative or non-finite values format as `—`.
 */
export function formatBytes(bytes: number, locale: string): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—';
  const [value, unit] = bytes >= GB ? [bytes / GB, 'GB'] : bytes >= MB ? [bytes / MB, 'MB'] : bytes >= KB ? [bytes / KB, 'KB'] : [bytes, 'B'];
  const digits = unit === 'B' || value >= 10 ? 0 : 1;
  return `${new Intl.NumberFormat(locale, { maximumFractionDigits: digits, minimumFractionDigits: digits }).format(value)} ${unit}`;
}

/**
 * Formats a whole count (jobs, dimensions, records) with the locale's digit grouping, rounded
 * to an integer (`12,345`).
 */
export function formatCount(count: number, locale: string): string {
  return new Intl.NumberFormat(locale, { maximumFractionDigits: 0 }).format(count);
}

/** Joins `items` as the locale writes a list (`Intl.ListFormat`, conjunction): "A, B, and C" / "A、B和C". */
export function formatList(items: readonly string[], locale: string): string {
  return new Intl.ListFormat(locale, { type: 'conjunction' }).format(items);
}

/**
 * Formats a token count with the locale's digit grouping (`4,096` / `4,096`). Every token number
 * the panel shows goes through this one function, so they all look the same.
 * @param tokens a count of tokens (not characters).
 */
export function formatTokens(tokens: number, locale: string): string {
  return formatCount(tokens, locale);
}

/**
 * Converts a 0..1 fraction into a whole percentage 0..100 (rounded down, so 100 % only shows
 * when the work is really done). Values outside 0..1 are clamped; `null` stays `null`.
 */
export function toPercent(fraction: number | null | undefined): number | null {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) return null;
  return Math.floor(Math.min(1, Math.max(0, fraction)) * 100);
}

/** What a progress bar shows for one model load (see `LoadProgress`). */
export interface ProgressView {
  /** Whole percent 0..100, or `null` when the engine reports no fraction (indeterminate bar). */
  percent: number | null;
  /** `"120 MB / 1.2 GB"` when byte counts are known, else `null`. */
  bytes: string | null;
  /** The load stage, for a translated stage label. */
  stage: LoadProgress['stage'];
  /** The engine's own progress line (not translated; engines report English). */
  text: string;
}

/**
 * Turns an engine `LoadProgress` into what the progress bar shows. When the engine reports
 * bytes but no fraction, the percentage is computed from the bytes.
 */
export function progressView(progress: LoadProgress, locale: string): ProgressView {
  const { loadedBytes, totalBytes } = progress;
  const hasBytes = typeof loadedBytes === 'number' && typeof totalBytes === 'number' && totalBytes > 0;
  const fraction = progress.fraction ?? (hasBytes ? loadedBytes / totalBytes : null);
  return {
    percent: progress.stage === 'ready' ? 100 : toPercent(fraction),
    bytes: hasBytes ? `${formatBytes(loadedBytes, locale)} / ${formatBytes(totalBytes, locale)}` : null,
    stage: progress.stage,
    text: progress.text,
  };
}

/**
 * Formats a time (ms since the epoch) as a localized relative phrase against `now`
 * ("5 minutes ago", "5分钟前"), switching to a short date after 7 days.
 */
export function formatRelativeTime(timeMs: number, nowMs: number, locale: string): string {
  const seconds = Math.round((timeMs - nowMs) / 1000);
  const abs = Math.abs(seconds);
  const rtf = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' });
  if (abs < 60) return rtf.format(0, 'second');
  if (abs < 3_600) return rtf.format(Math.round(seconds / 60), 'minute');
  if (abs < 86_400) return rtf.format(Math.round(seconds / 3_600), 'hour');
  if (abs < 7 * 86_400) return rtf.format(Math.round(seconds / 86_400), 'day');
  return formatDate(timeMs, locale);
}

/** Formats a time (ms since the epoch) as a short localized date, e.g. `Mar 4, 2025` / `2025年3月4日`. */
export function formatDate(timeMs: number, locale: string): string {
  return new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'short', day: 'numeric' }).format(timeMs);
}

/** Formats a time (ms since the epoch) as a localized date and time to the minute. */
export function formatDateTime(timeMs: number, locale: string): string {
  return new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }).format(timeMs);
}

/** Formats a retrieval score (or any small real number) with 3 decimals, e.g. `0.032`. */
export function formatScore(score: number, locale: string): string {
  return new Intl.NumberFormat(locale, { minimumFractionDigits: 3, maximumFractionDigits: 3 }).format(score);
}

/**
 * Whether a text is long enough to be clamped (shown to a few lines with "Show more"): more than
 * `maxChars` characters (UTF-16 code units) or more than `maxLines` lines.
 */
export function isLongText(text: string, maxChars: number, maxLines: number): boolean {
  return text.length > maxChars || text.split('\n').length > maxLines;
}

/**
 * What separates two sentences placed side by side (a reason and what it means, a note and its
 * link): a space in English, nothing in Chinese, whose full stop 。 already closes the sentence.
 * @param locale a BCP 47 tag such as `en` or `zh-CN`.
 */
export function sentenceGap(locale: string): string {
  return /^(zh|ja)\b/i.test(locale) ? '' : ' ';
}
