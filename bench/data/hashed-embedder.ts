/**
 * TEST EMBEDDER — not a language model. A deterministic `Embedder` for unit tests, the retrieval
 * benchmark and the evaluation command when no real embedding model can run here: feature hashing
 * (Weinberger et al., "Feature Hashing for Large Scale Multitask Learning", ICML 2009) of
 * character n-grams into a signed, L2-normalized vector.
 *
 * Features: for Latin-script words, the character 3-grams of `<word>` (with boundary marks) and
 * the whole word; for Han characters, every unigram and bigram. Weights are `1 + ln(tf)`. It
 * captures surface overlap only (shared words, shared characters, spelling variants) and has no
 * semantics and no cross-language ability: it must never be reported as if it were a real
 * multilingual model.
 */
import type { Embedder } from '../../src/engines/types';

/** FNV-1a 32-bit of a string. */
function fnv32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The hashed features of `text` with their term frequencies. */
export function hashedFeatures(text: string): Map<string, number> {
  const features = new Map<string, number>();
  const add = (f: string) => features.set(f, (features.get(f) ?? 0) + 1);
  const normalized = text.normalize('NFKC').toLowerCase();
  for (const word of normalized.match(/[\p{L}\p{N}]+/gu) ?? []) {
    const chars = Array.from(word);
    if (/\p{Script=Han}/u.test(word)) {
      chars.forEach((c, i) => {
        add(`u:${c}`);
        if (i + 1 < chars.length) add(`b:${c}${chars[i + 1]}`);
      });
      continue;
    }
    add(`w:${word}`);
    const marked = `<${word}>`;
    for (let i = 0; i + 3 <= marked.length; i += 1) add(`t:${marked.slice(i, i + 3)}`);
  }
  return features;
}

/**
 * Creates the test embedder.
 * @param dimension vector length (default 256).
 * @param modelId id stored next to each vector (default `test:hashed-ngrams-<dimension>`).
 */
export function createHashedEmbedder(dimension = 256, modelId = `test:hashed-ngrams-${dimension}`): Embedder & { calls: number } {
  const embedder = {
    modelId,
    dimension,
    calls: 0,
    async embed(texts: string[]): Promise<Float32Array[]> {
      embedder.calls += 1;
      return texts.map((text) => {
        const v = new Float32Array(dimension);
        for (const [feature, tf] of hashedFeatures(text)) {
          const h = fnv32(feature);
          v[h % dimension]! += (h & 0x80000000 ? -1 : 1) * (1 + Math.log(tf));
        }
        let norm = 0;
        for (const x of v) norm += x * x;
        norm = Math.sqrt(norm);
        if (norm > 0) for (let i = 0; i < dimension; i += 1) v[i]! /= norm;
        return v;
      });
    },
  };
  return embedder;
}
