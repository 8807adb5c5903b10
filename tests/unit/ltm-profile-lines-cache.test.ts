/**
 * `createProfileLinesReader` (src/memory/long-term/profile-summary): the profile lines every chat
 * turn puts in `<about_user>`, read once and kept until a write touches a profile row (`aboutMe.*`),
 * by any writer (`db.writes`, src/db/write-counters.ts). Real Dexie on fake-indexeddb.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { aboutMeKey, createProfileLinesReader, profileLinesForPrompt } from '../../src/memory/long-term/profile-summary';

const dbs: RecallDB[] = [];
afterEach(async () => {
  for (const d of dbs.splice(0)) await d.delete();
});

/** A stored profile row with these lines (the fields `readProfile` reads). */
const profileRow = (namespace: string, texts: string[]) => ({
  key: aboutMeKey(namespace),
  value: { namespace, lines: texts.map((text) => ({ text, sourceIds: [], edited: false })), updatedAt: 1 },
});

describe('profile lines cache', () => {
  it('reads a profile once until a profile row is written; other settings rows leave it alone', async () => {
    const db = new RecallDB(`profile-lines-${crypto.randomUUID()}`);
    dbs.push(db);
    await db.settings.put(profileRow('default', ['Lives in Hangzhou']));
    let reads = 0;
    db.settings.hook('reading', (row) => {
      reads += 1;
      return row;
    });
    const lines = createProfileLinesReader(db);
    expect(await lines('default')).toEqual(['Lives in Hangzhou']);
    expect(reads).toBe(1);
    expect(await lines('default')).toEqual(['Lives in Hangzhou']);
    expect(reads).toBe(1);
    // The open-turn marker, a setting: not profile rows.
    await db.settings.put({ key: 'state.openTurn.m1', value: {} });
    await db.settings.put({ key: 'memoryTopK', value: 3 });
    expect(await lines('default')).toEqual(['Lives in Hangzhou']);
    expect(reads).toBe(1);
    // A rebuild (or an edit, an import) writes the row: read again.
    await db.settings.put(profileRow('default', ['Lives in Shenzhen', 'Has a cat named Mochi']));
    expect(await lines('default')).toEqual(['Lives in Shenzhen', 'Has a cat named Mochi']);
    expect(reads).toBe(2);
    // Deleting a profile's row, and another namespace's profile, each as the uncached read says.
    await db.settings.put(profileRow('work', ['Works at KPMG']));
    expect(await lines('work')).toEqual(await profileLinesForPrompt(db, 'work'));
    await db.settings.delete(aboutMeKey('default'));
    expect(await lines('default')).toEqual([]);
  });

  it('hands out copies', async () => {
    const db = new RecallDB(`profile-lines-${crypto.randomUUID()}`);
    dbs.push(db);
    await db.settings.put(profileRow('default', ['Lives in Hangzhou']));
    const lines = createProfileLinesReader(db);
    (await lines('default')).push('changed');
    expect(await lines('default')).toEqual(['Lives in Hangzhou']);
  });
});
