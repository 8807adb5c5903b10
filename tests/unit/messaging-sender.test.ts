import { describe, expect, it } from 'vitest';
import type { Runtime } from 'webextension-polyfill';
import { assertSender } from '../../src/messaging/protocol';

const ID = 'abcdefghijklmnopabcdefghijklmnop';
const page = (path: string, id = ID): Runtime.MessageSender => ({ id, url: `chrome-extension://${id}${path}` });

describe('assertSender (every core and service-worker handler calls it first)', () => {
  it('accepts the allowed pages of this extension', () => {
    expect(() => assertSender(page('/sidepanel.html'), ['sidepanel'], ID)).not.toThrow();
    expect(() => assertSender(page('/background.js'), ['sidepanel', 'background'], ID)).not.toThrow();
  });

  it('refuses a page of this extension that is not in the allowed list', () => {
    expect(() => assertSender(page('/offscreen.html'), ['sidepanel'], ID)).toThrow(/Rejected message from chrome-extension:\/\/.*offscreen\.html/);
  });

  it('refuses another extension, even when it names our page path or claims our id', () => {
    const other = 'ponmlkjihgfedcbaponmlkjihgfedcba';
    expect(() => assertSender(page('/sidepanel.html', other), ['sidepanel'], ID)).toThrow(/Rejected/);
    // The id claims to be ours, but the URL's host is another extension's.
    expect(() => assertSender({ id: ID, url: `chrome-extension://${other}/sidepanel.html` }, ['sidepanel'], ID)).toThrow(/Rejected/);
  });

  it('refuses a content script (a message from a web page tab) and a sender without a URL', () => {
    const contentScript: Runtime.MessageSender = {
      id: ID,
      url: 'https://evil.example/sidepanel.html',
      tab: { url: 'https://evil.example/', index: 0, highlighted: false, active: true, pinned: false, incognito: false },
    };
    expect(() => assertSender(contentScript, ['sidepanel'], ID)).toThrow(/Rejected message from https:\/\/evil\.example/);
    expect(() => assertSender({ id: ID }, ['sidepanel'], ID)).toThrow(/Rejected message from abcdefgh/);
  });

  it('refuses our own page opened inside a web tab frame', () => {
    const framed: Runtime.MessageSender = {
      ...page('/sidepanel.html'),
      tab: { url: 'http://evil.example/', index: 0, highlighted: false, active: true, pinned: false, incognito: false },
    };
    expect(() => assertSender(framed, ['sidepanel'], ID)).toThrow(/Rejected/);
  });
});
