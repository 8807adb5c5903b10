/** `cutAtBoundary`: a sentence end when one keeps at least half, else a word end, never mid-word or mid-surrogate (values by hand). */
import { describe, expect, it } from 'vitest';
import { cutAtBoundary } from '../../src/text/boundary';

describe('cutAtBoundary', () => {
  it('keeps a text that fits as it is', () => {
    expect(cutAtBoundary('Short.', 6)).toEqual({ text: 'Short.', cut: 'none' });
  });

  it('cuts at the last sentence end that fits', () => {
    // 30 characters; at most 22 keeps the first two sentences (20 characters).
    expect(cutAtBoundary('One two. Three four. Five six.', 22)).toEqual({ text: 'One two. Three four.', cut: 'sentence' });
  });

  it('cuts at a word end when the last sentence end keeps less than half', () => {
    // The only sentence end is at 3 of 20 (under half): the last whole word within 20 is "fox" (ends at 17).
    expect(cutAtBoundary('Hi. The quick fox jumps over it', 20)).toEqual({ text: 'Hi. The quick fox', cut: 'word' });
  });

  it('never cuts inside a word', () => {
    expect(cutAtBoundary('hello wonderful world', 12)).toEqual({ text: 'hello', cut: 'word' });
  });

  it('cuts Chinese at 。', () => {
    expect(cutAtBoundary('我住在杭州。我喜欢喝茶。周末去爬山', 13)).toEqual({ text: '我住在杭州。我喜欢喝茶。', cut: 'sentence' });
  });

  it('falls back to a code point, never half a surrogate pair', () => {
    expect(cutAtBoundary('😀😀😀', 3)).toEqual({ text: '😀', cut: 'char' });
    expect(cutAtBoundary('anything', 0)).toEqual({ text: '', cut: 'char' });
  });
});
