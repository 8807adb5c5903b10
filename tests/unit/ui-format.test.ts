/** Side panel formatters (src/ui/lib/format.ts): expected strings worked out by hand. */
import { describe, expect, it } from 'vitest';
import {
  formatBytes,
  formatCount,
  formatList,
  formatRelativeTime,
  formatTokens,
  isLongText,
  progressView,
  sentenceGap,
  toPercent,
} from '../../src/ui/lib/format';

describe('formatBytes (decimal SI units)', () => {
  it('picks the unit and one decimal below 10', () => {
    expect(formatBytes(999, 'en')).toBe('999 B');
    expect(formatBytes(1_500, 'en')).toBe('1.5 KB');
    expect(formatBytes(1_234_567, 'en')).toBe('1.2 MB');
    expect(formatBytes(350_000_000, 'en')).toBe('350 MB');
    expect(formatBytes(4_100_000_000, 'en')).toBe('4.1 GB');
    expect(formatBytes(12_345_678_901, 'en')).toBe('12 GB');
  });
  it('keeps one decimal even when it is zero, so sizes do not jump', () => {
    expect(formatBytes(2_000_000, 'en')).toBe('2.0 MB');
  });
  it('rejects nonsense instead of printing NaN', () => {
    expect(formatBytes(-1, 'en')).toBe('—');
    expect(formatBytes(Number.NaN, 'en')).toBe('—');
  });
});

describe('formatTokens', () => {
  it('groups digits per locale', () => {
    expect(formatTokens(4096, 'en')).toBe('4,096');
    expect(formatTokens(131072, 'zh-CN')).toBe('131,072');
    expect(formatTokens(512, 'en')).toBe('512');
  });
  it('formats counts the same way, rounded to whole numbers', () => {
    expect(formatCount(12345, 'en')).toBe('12,345');
    expect(formatCount(12345, 'zh-CN')).toBe('12,345');
    expect(formatCount(2.6, 'en')).toBe('3');
    expect(formatTokens(2000, 'zh-CN')).toBe(formatCount(2000, 'zh-CN'));
  });
});

describe('isLongText', () => {
  it('counts characters and lines against the limits (exclusive)', () => {
    expect(isLongText('a'.repeat(160), 160, 3)).toBe(false);
    expect(isLongText('a'.repeat(161), 160, 3)).toBe(true);
    expect(isLongText('一\n二\n三', 160, 3)).toBe(false);
    expect(isLongText('一\n二\n三\n四', 160, 3)).toBe(true);
  });
});

describe('toPercent', () => {
  it('floors so that 100 % means done, and clamps', () => {
    expect(toPercent(0.999)).toBe(99);
    expect(toPercent(1)).toBe(100);
    expect(toPercent(0.5)).toBe(50);
    expect(toPercent(1.7)).toBe(100);
    expect(toPercent(-0.2)).toBe(0);
    expect(toPercent(null)).toBeNull();
    expect(toPercent(Number.NaN)).toBeNull();
  });
});

describe('progressView', () => {
  it('uses the engine fraction and shows MB of total', () => {
    const view = progressView(
      { stage: 'download', fraction: 0.25, loadedBytes: 250_000_000, totalBytes: 1_000_000_000, text: 'Fetching param cache[3/12]' },
      'en',
    );
    expect(view).toEqual({ percent: 25, bytes: '250 MB / 1.0 GB', stage: 'download', text: 'Fetching param cache[3/12]' });
  });
  it('computes the percentage from bytes when the engine gives no fraction', () => {
    expect(progressView({ stage: 'download', fraction: null, loadedBytes: 300_000, totalBytes: 1_200_000, text: '' }, 'en').percent).toBe(25);
  });
  it('is indeterminate without fraction or bytes, and 100 % when ready', () => {
    expect(progressView({ stage: 'compile', fraction: null, text: 'Compiling shaders' }, 'en')).toMatchObject({ percent: null, bytes: null });
    expect(progressView({ stage: 'ready', fraction: null, text: '' }, 'en').percent).toBe(100);
  });
});

describe('formatRelativeTime', () => {
  const now = Date.UTC(2025, 2, 4, 12, 0, 0);
  it('speaks English and Chinese', () => {
    expect(formatRelativeTime(now - 20_000, now, 'en')).toBe('now');
    expect(formatRelativeTime(now - 5 * 60_000, now, 'en')).toBe('5 minutes ago');
    expect(formatRelativeTime(now - 5 * 60_000, now, 'zh-CN')).toBe('5分钟前');
    expect(formatRelativeTime(now - 3 * 3_600_000, now, 'en')).toBe('3 hours ago');
    expect(formatRelativeTime(now - 86_400_000, now, 'en')).toBe('yesterday');
    expect(formatRelativeTime(now - 86_400_000, now, 'zh-CN')).toBe('昨天');
  });
  it('falls back to a date after a week', () => {
    expect(formatRelativeTime(Date.UTC(2025, 0, 15, 12), now, 'en')).toBe('Jan 15, 2025');
  });
});

describe('sentenceGap', () => {
  it('is a space between English sentences and nothing after a Chinese full stop', () => {
    expect(sentenceGap('en')).toBe(' ');
    expect(sentenceGap('zh-CN')).toBe('');
    expect('回答达到长度上限，已被截断。' + sentenceGap('zh-CN') + '可在“设置”中调高').toBe('回答达到长度上限，已被截断。可在“设置”中调高');
  });
});

describe('formatList', () => {
  it('joins as each language writes a list', () => {
    expect(formatList(['summaries', 'notes', 'facts'], 'en')).toBe('summaries, notes, and facts');
    expect(formatList(['摘要', '笔记', '事实'], 'zh-CN')).toBe('摘要、笔记和事实');
    expect(formatList(['one'], 'en')).toBe('one');
  });
});
