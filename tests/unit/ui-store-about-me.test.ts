/**
 * "What Recall knows about me" store (src/ui/state/about-me.svelte.ts) against a fake messaging
 * api (tests/helpers/fake-api.ts: the core cannot run behind the panel's messaging in Node); the
 * store and the notices are the real ones.
 */
import { describe, expect, it } from 'vitest';
import type { AboutMeProfile } from '../../src/model/about-me';
import { createAboutMeStore } from '../../src/ui/state/about-me.svelte';
import { createNoticesStore } from '../../src/ui/state/notices.svelte';
import { createFakeApi } from '../helpers/fake-api';

const profile = (lines: AboutMeProfile['lines'], builtAt = 1): AboutMeProfile => ({ namespace: 'default', lines, suppressed: [], builtAt, via: 'rules' });

describe('about-me store', () => {
  it('sends edited and new lines pinned, unchanged generated lines as they were, removed lines not at all', async () => {
    const api = createFakeApi();
    api.on('aboutMe.get', () =>
      profile([
        { text: 'Lives in Porto', pinned: false, sourceIds: ['m1'] },
        { text: 'Likes tea', pinned: false, sourceIds: ['m2'] },
        { text: 'Call me Ana', pinned: true, sourceIds: [] },
      ]),
    );
    api.on('aboutMe.save', ({ lines }) => profile(lines.map((l) => ({ ...l, sourceIds: [] }))));
    const me = createAboutMeStore({ ...api, notices: createNoticesStore() });
    await me.load();
    me.startEdit();
    me.draft![0]!.text = 'Lives in Porto, near the river ';
    me.removeLine(1);
    me.addLine();
    me.draft![2]!.text = 'Vegetarian';
    await me.save();
    expect(api.callsOf('aboutMe.save')).toEqual([
      {
        namespace: 'default',
        lines: [
          { text: 'Lives in Porto, near the river', pinned: true },
          { text: 'Call me Ana', pinned: true },
          { text: 'Vegetarian', pinned: true },
        ],
      },
    ]);
    expect(me.draft).toBeNull();
  });

  it('rebuild waits for a new profile (event.jobs) and is not disturbed while editing', async () => {
    const api = createFakeApi();
    let built = 1;
    api.on('aboutMe.get', () => profile([{ text: `v${built}`, pinned: false, sourceIds: [] }], built));
    api.on('aboutMe.rebuild', () => undefined);
    const me = createAboutMeStore({ ...api, notices: createNoticesStore() });
    me.listen();
    await me.load();
    await me.rebuild();
    expect(me.rebuilding).toBe(true);
    built = 2;
    api.emit('event.jobs', {} as never);
    await new Promise((r) => setTimeout(r, 0));
    expect(me.rebuilding).toBe(false);
    expect(me.profile?.lines.map((l) => l.text)).toEqual(['v2']);
    me.startEdit();
    built = 3;
    api.emit('event.jobs', {} as never);
    await new Promise((r) => setTimeout(r, 0));
    expect(me.profile?.lines.map((l) => l.text)).toEqual(['v2']);
  });
});
