/** The framing shared by the sealed-file codecs (`src/model/sealed-chunks.ts`): pieces worked out by hand. */
import { describe, expect, it } from 'vitest';
import { fixedPieces, startsWithMagic } from '../../src/model/sealed-chunks';

async function* source(...chunks: number[][]): AsyncGenerator<Uint8Array> {
  for (const c of chunks) yield Uint8Array.from(c);
}

const pieces = async (chunks: AsyncIterable<Uint8Array>, size: number) => {
  const out: { bytes: number[]; last: boolean }[] = [];
  for await (const p of fixedPieces(chunks, size)) out.push({ bytes: Array.from(p.bytes), last: p.last });
  return out;
};

describe('fixedPieces', () => {
  it('re-cuts uneven chunks into pieces of the size, the shorter last one flagged', async () => {
    expect(await pieces(source([1, 2], [3, 4, 5, 6, 7], [8]), 3)).toEqual([
      { bytes: [1, 2, 3], last: false },
      { bytes: [4, 5, 6], last: false },
      { bytes: [7, 8], last: true },
    ]);
  });

  it('a source of exactly k pieces gives k pieces, the k-th flagged last (no empty piece after it)', async () => {
    expect(await pieces(source([1, 2, 3, 4], [5, 6]), 3)).toEqual([
      { bytes: [1, 2, 3], last: false },
      { bytes: [4, 5, 6], last: true },
    ]);
  });

  it('an empty source gives one empty last piece (the codecs seal it, so an empty file is still sealed)', async () => {
    expect(await pieces(source(), 4)).toEqual([{ bytes: [], last: true }]);
    expect(await pieces(source([], []), 4)).toEqual([{ bytes: [], last: true }]);
  });
});

describe('startsWithMagic', () => {
  it('compares the first bytes, and a file shorter than the magic does not match', async () => {
    const magic = new TextEncoder().encode('RCL1');
    expect(await startsWithMagic(new Blob([new TextEncoder().encode('RCL1 and more')]), magic)).toBe(true);
    expect(await startsWithMagic(new Blob([new TextEncoder().encode('RCL2 and more')]), magic)).toBe(false);
    expect(await startsWithMagic(new Blob([new TextEncoder().encode('RCL')]), magic)).toBe(false);
  });
});
