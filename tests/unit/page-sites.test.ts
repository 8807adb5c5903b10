/** Which pages may be read (src/page/sites.ts): unreadable URLs, the blocked-site patterns, the check before any script runs. */
import { describe, expect, it } from 'vitest';
import { assertReadable, blockingPattern, normalizeSitePattern, unreadableReason } from '../../src/page/sites';
import { codedErrorOf } from '../../src/model/errors';

describe('unreadableReason', () => {
  it('refuses browser pages, other schemes and the Web Store; tries web and file pages', () => {
    expect(unreadableReason('chrome://settings')).toBe('browser');
    expect(unreadableReason('chrome-extension://abc/sidepanel.html')).toBe('browser');
    expect(unreadableReason('about:blank')).toBe('browser');
    expect(unreadableReason('view-source:https://example.com/')).toBe('browser');
    expect(unreadableReason('not a url')).toBe('browser');
    expect(unreadableReason('https://chromewebstore.google.com/detail/x/abc')).toBe('store');
    expect(unreadableReason('https://chrome.google.com/webstore/detail/abc')).toBe('store');
    expect(unreadableReason('https://chrome.google.com/search')).toBeNull();
    expect(unreadableReason('https://example.com/a')).toBeNull();
    expect(unreadableReason('http://127.0.0.1:8080/')).toBeNull();
    expect(unreadableReason('file:///home/u/notes.html')).toBeNull();
  });
});

describe('blocked-site patterns', () => {
  const list = ['bank.example', 'mail.corp.test/private', '127.0.0.1:9000'];

  it('a host blocks itself and its subdomains, not look-alike hosts', () => {
    expect(blockingPattern('https://bank.example/login', list)).toBe('bank.example');
    expect(blockingPattern('https://www.bank.example/', list)).toBe('bank.example');
    expect(blockingPattern('https://BANK.example/', list)).toBe('bank.example');
    expect(blockingPattern('https://mybank.example/', list)).toBeNull();
    expect(blockingPattern('https://bank.example.org/', list)).toBeNull();
  });

  it('a path prefix blocks that path and below only, at a segment boundary', () => {
    expect(blockingPattern('https://mail.corp.test/private', list)).toBe('mail.corp.test/private');
    expect(blockingPattern('https://mail.corp.test/private/inbox?x=1', list)).toBe('mail.corp.test/private');
    expect(blockingPattern('https://mail.corp.test/privateer', list)).toBeNull();
    expect(blockingPattern('https://mail.corp.test/public', list)).toBeNull();
  });

  it('a port blocks that port only; no port blocks every port', () => {
    expect(blockingPattern('http://127.0.0.1:9000/a', list)).toBe('127.0.0.1:9000');
    expect(blockingPattern('http://127.0.0.1:9001/a', list)).toBeNull();
    expect(blockingPattern('http://bank.example:8443/', list)).toBe('bank.example');
  });

  it('normalizes what the user types and rejects what is no host', () => {
    expect(normalizeSitePattern('  https://Example.COM/  ')).toBe('example.com');
    expect(normalizeSitePattern('*.example.com')).toBe('example.com');
    expect(normalizeSitePattern('example.com/Private/')).toBe('example.com/Private/');
    expect(normalizeSitePattern('localhost:3000')).toBe('localhost:3000');
    expect(normalizeSitePattern('')).toBeNull();
    expect(normalizeSitePattern('two words')).toBeNull();
    expect(normalizeSitePattern('user:pw@example.com')).toBeNull();
    // A stored pattern in its typed form still matches (patterns are parsed again when matched).
    expect(blockingPattern('https://a.example.com/', ['*.Example.com'])).toBe('*.Example.com');
  });

  it('assertReadable refuses with a coded error before anything runs', () => {
    const code = (url: string, blocked: string[] = []) => {
      try {
        assertReadable(url, blocked);
        return null;
      } catch (error) {
        return codedErrorOf(error);
      }
    };
    expect(code('chrome://extensions')).toMatchObject({ domain: 'page', code: 'unreadable' });
    expect(code('https://chromewebstore.google.com/')).toMatchObject({ domain: 'page', code: 'unreadable', params: { host: 'chromewebstore.google.com' } });
    expect(code('https://www.bank.example/x', list)).toEqual({
      domain: 'page',
      code: 'blocked',
      params: { host: 'www.bank.example', pattern: 'bank.example' },
    });
    expect(code('https://news.example/x', list)).toBeNull();
  });
});
