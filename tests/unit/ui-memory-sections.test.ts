/** The Memory tab's collapsible sections (src/ui/state/memory-sections.svelte.ts), over an in-memory Storage. */
import { describe, expect, it } from 'vitest';
import { createMemorySections } from '../../src/ui/state/memory-sections.svelte';
import type { PrefStorage } from '../../src/ui/lib/ui-prefs';

function memoryStorage(): PrefStorage & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v), removeItem: (k) => void data.delete(k) };
}
const KEY = 'recall.ui.v1.memorySectionsOpen';

describe('memory sections', () => {
  it('start all closed, and remember what was opened, in their own order', () => {
    const storage = memoryStorage();
    const sections = createMemorySections(storage);
    expect(sections.open).toEqual([]);
    sections.toggle('data');
    sections.toggle('about');
    expect(sections.open).toEqual(['about', 'data']);
    expect(storage.data.get(KEY)).toBe('"about,data"');
    const again = createMemorySections(storage);
    expect(again.isOpen('data')).toBe(true);
    expect(again.isOpen('review')).toBe(false);
    again.set('data', false);
    again.set('data', false);
    expect(createMemorySections(storage).open).toEqual(['about']);
  });

  it('read an unreadable or foreign preference as nothing open, and work without storage', () => {
    const storage = memoryStorage();
    storage.data.set(KEY, '{not json');
    expect(createMemorySections(storage).open).toEqual([]);
    storage.data.set(KEY, '"data,bogus,,about"');
    expect(createMemorySections(storage).open).toEqual(['about', 'data']);
    const none = createMemorySections(null);
    none.toggle('learned');
    expect(none.open).toEqual(['learned']);
  });
});
