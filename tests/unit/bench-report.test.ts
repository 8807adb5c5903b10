/**
 * The benchmark report machinery (`bench/lib/stats.ts`, `bench/lib/report.ts`): statistics
 * computed by hand, and BENCHMARKS.md sections rewritten between markers without touching the
 * hand-written text around them.
 */
import { describe, expect, it } from 'vitest';
import { asBench, defineBench } from '../../bench/lib/bench';
import { renderTable, replaceSection } from '../../bench/lib/report';
import { formatBytes, repeat, summarize } from '../../bench/lib/stats';

describe('summarize', () => {
  it('gives the median and the nearest-rank p95 of five runs (the slowest run)', () => {
    expect(summarize([30, 10, 50, 20, 40])).toEqual({ n: 5, median: 30, p95: 50, min: 10, max: 50 });
  });

  it('averages the two middle values of an even count; p95 of 20 samples is the 19th smallest', () => {
    const samples = Array.from({ length: 20 }, (_, i) => 20 - i); // 20, 19, …, 1
    const s = summarize(samples);
    expect(s.median).toBe(10.5); // (10 + 11) / 2
    expect(s.p95).toBe(19); // ⌈0.95 · 20⌉ = 19th smallest
  });

  it('refuses no samples and non-finite samples with a clear error', () => {
    expect(() => summarize([])).toThrow(/no samples/);
    expect(() => summarize([1, Number.NaN])).toThrow(/non-finite/);
  });

  it('repeat runs the warm-up unrecorded, then records every run in order', async () => {
    const seen: number[] = [];
    const { samples, summary } = await repeat(5, async (run) => (seen.push(run), run * 10), 1);
    expect(seen).toEqual([-1, 0, 1, 2, 3, 4]);
    expect(samples).toEqual([0, 10, 20, 30, 40]);
    expect(summary.median).toBe(20);
    await expect(repeat(0, async () => 1)).rejects.toThrow(/runs must be/);
  });

  it('formats bytes in SI units', () => {
    expect([formatBytes(999), formatBytes(2_500), formatBytes(32_573_926)]).toEqual(['999 B', '2.5 kB', '32.57 MB']);
  });
});

describe('BENCHMARKS.md sections', () => {
  const doc = [
    '# Benchmarks',
    '',
    'Hand-written method.',
    '',
    '<!-- bench:coldstart:begin -->',
    'old numbers',
    '<!-- bench:coldstart:end -->',
    '',
    'Hand-written analysis.',
    '',
  ].join('\n');

  it('replaces only the text between the markers of the section', () => {
    const out = replaceSection(doc, 'coldstart', 'new numbers\n');
    expect(out).toBe(doc.replace('old numbers', 'new numbers'));
  });

  it('appends a section whose markers are missing, leaving the rest as it was', () => {
    const out = replaceSection(doc, 'package', 'sizes');
    expect(out.startsWith(doc.trimEnd())).toBe(true);
    expect(out.endsWith('\n\n<!-- bench:package:begin -->\nsizes\n<!-- bench:package:end -->\n')).toBe(true);
  });

  it('refuses damaged markers (one missing or in the wrong order) instead of overwriting text', () => {
    expect(() => replaceSection(doc.replace('<!-- bench:coldstart:end -->', ''), 'coldstart', 'x')).toThrow(/markers of section "coldstart" are damaged/);
    const swapped = '<!-- bench:a:end -->\ntext\n<!-- bench:a:begin -->\n';
    expect(() => replaceSection(swapped, 'a', 'x')).toThrow(/end before begin/);
  });

  it('renders a Markdown table, numbers right-aligned, pipes escaped', () => {
    const table = renderTable({
      title: 'T:',
      columns: ['what', 'ms'],
      rows: [
        ['a|b', 1234],
        ['c', 5.5],
      ],
    });
    expect(table).toBe('T:\n\n| what | ms |\n|---|---:|\n| a\\|b | 1,234 |\n| c | 5.5 |');
  });
});

describe('the runner accepts only benches it can write into BENCHMARKS.md', () => {
  const bench = defineBench({ name: 'vector-layout', title: 'T', method: 'M', quick: {}, full: {}, run: async () => ({ tables: [] }) });

  it('accepts a defineBench export named after its file', () => {
    expect(asBench(bench, 'vector-layout')).toBe(bench);
  });

  it('refuses the older { name, run() } export (measured, then written nowhere) and names what is missing', () => {
    const legacy = { name: 'long-term index layout', run: async () => ({}) };
    expect(() => asBench(legacy, 'vector-layout')).toThrow(/bench\/vector-layout\.bench\.ts: .*not a defineBench.*missing title, method, quick, full/);
    expect(() => asBench(undefined, 'x')).toThrow(/missing name, title, method, quick, full, run/);
  });

  it('refuses a bench whose name is not its file name (its result would land in another section)', () => {
    expect(() => asBench(bench, 'vault')).toThrow(/name "vector-layout" must be the file's name "vault"/);
  });
});
