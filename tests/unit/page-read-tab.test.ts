/**
 * Reading a tab (src/page/read-tab.ts): the URL is checked before any script is injected. The
 * browser's `chrome.scripting` cannot run in Node: it is replaced by a recorder that answers like
 * Chrome does (an injection result list, or Chrome's error for a page it refuses).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readTab, selectionAttachment, PAGE_READER_SCRIPT } from '../../src/page/read-tab';
import { codedErrorOf } from '../../src/model/errors';

const calls: unknown[] = [];
let answer: () => Promise<unknown> = async () => [];
const g = globalThis as unknown as { chrome?: Record<string, unknown> };
const saved = g.chrome;
g.chrome = { ...(saved ?? {}), scripting: { executeScript: (injection: unknown) => (calls.push(injection), answer()) } };
afterEach(() => {
  calls.length = 0;
});

const errorOf = async (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => ({ ...codedErrorOf(e), message: e instanceof Error ? e.message : '' }),
  );

const codeOf = async (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => codedErrorOf(e),
  );

describe('readTab', () => {
  it('refuses blocked, browser and store pages before injecting anything', async () => {
    expect(await codeOf(readTab({ id: 1, url: 'https://www.bank.example/a' }, ['bank.example']))).toMatchObject({ code: 'blocked' });
    expect(await codeOf(readTab({ id: 1, url: 'chrome://settings/' }, []))).toMatchObject({ code: 'unreadable' });
    expect(await codeOf(readTab({ id: 1, url: 'https://chromewebstore.google.com/' }, []))).toMatchObject({ code: 'unreadable' });
    expect(await codeOf(readTab({ id: 1 }, []))).toMatchObject({ code: 'no_access' }); // no grant: Chrome hides the URL
    expect(await codeOf(readTab({ url: 'https://a.example/' }, []))).toMatchObject({ code: 'no_tab' });
    expect(calls).toEqual([]);
  });

  it('injects the reader into that tab only and returns its content; an empty page or a refused injection says so', async () => {
    answer = async () => [{ frameId: 0, result: { url: 'ignored', title: 'News', blocks: [{ kind: 'text', text: 'Hello.' }] } }];
    expect(await readTab({ id: 7, url: 'https://news.example/a', title: 'Tab title' }, ['bank.example'])).toEqual({
      url: 'https://news.example/a',
      title: 'News',
      blocks: [{ kind: 'text', text: 'Hello.' }],
    });
    expect(calls).toEqual([{ target: { tabId: 7 }, files: [PAGE_READER_SCRIPT] }]);
    answer = async () => [{ frameId: 0, result: { url: 'x', title: 'Blank', blocks: [] } }];
    expect(await codeOf(readTab({ id: 7, url: 'https://news.example/b' }, []))).toMatchObject({ code: 'empty', params: { host: 'news.example' } });
    answer = async () => [{ frameId: 0, result: { url: 'x', title: 'doc.pdf', blocks: [], contentType: 'application/pdf' } }];
    expect(await codeOf(readTab({ id: 7, url: 'https://news.example/doc.pdf' }, []))).toMatchObject({ code: 'unreadable', params: { host: 'news.example' } });
    answer = async () => {
      throw new Error('Cannot access contents of the page. Extension manifest must request permission to access the respective host.');
    };
    expect(await codeOf(readTab({ id: 7, url: 'https://news.example/c' }, []))).toMatchObject({ code: 'no_access' });
  });
});

describe('readTab on a PDF in the browser viewer', () => {
  const pdfProbe = (extra: Record<string, unknown>) => async () => [
    { frameId: 0, result: { url: 'x', title: 'paper.pdf', blocks: [], contentType: 'application/pdf', ...extra } },
  ];

  it('hands the bytes the reader fetched to the PDF reader and returns its text (never the bytes)', async () => {
    answer = pdfProbe({ pdfData: 'JVBERi0=' });
    const sources: unknown[] = [];
    const readPdf = async (source: unknown) => (
      sources.push(source),
      { url: 'ignored', title: 'A paper', blocks: [{ kind: 'text' as const, text: 'Gulls.' }], contentType: 'application/pdf' }
    );
    expect(await readTab({ id: 3, url: 'https://a.example/paper.pdf', title: 'paper.pdf' }, [], readPdf)).toEqual({
      url: 'https://a.example/paper.pdf',
      title: 'A paper',
      blocks: [{ kind: 'text', text: 'Gulls.' }],
    });
    expect(sources).toEqual([{ url: 'https://a.example/paper.pdf', title: 'paper.pdf', data: 'JVBERi0=' }]);
  });

  it('a scan without text is empty; a PDF the tab could not fetch or pdf.js cannot open is unreadable', async () => {
    answer = pdfProbe({ pdfData: 'JVBERi0=' });
    const scan = async () => ({ url: 'u', title: 't', blocks: [], contentType: 'application/pdf' });
    expect(await codeOf(readTab({ id: 3, url: 'https://a.example/scan.pdf' }, [], scan))).toMatchObject({ code: 'empty' });
    const broken = async () => {
      throw new Error('Invalid PDF structure.');
    };
    expect(await codeOf(readTab({ id: 3, url: 'https://a.example/bad.pdf' }, [], broken))).toMatchObject({ code: 'unreadable', params: { host: 'a.example' } });
    answer = pdfProbe({ pdfError: 'too_large' });
    expect(await errorOf(readTab({ id: 3, url: 'https://a.example/big.pdf' }, [], scan))).toMatchObject({
      code: 'unreadable',
      message: expect.stringContaining('too_large'),
    });
  });

  it('a local file the extension may not access says how to allow it', async () => {
    answer = async () => {
      throw new Error('Cannot access contents of url "file:///home/u/paper.pdf". Extension manifest must request permission to access this host.');
    };
    expect(await errorOf(readTab({ id: 3, url: 'file:///home/u/paper.pdf' }, []))).toMatchObject({
      code: 'no_access',
      message: expect.stringContaining('Allow access to file URLs'),
    });
  });
});

describe('selectionAttachment', () => {
  it('checks the blocked list and cuts the selection', () => {
    expect(selectionAttachment({ url: 'https://a.example/p', title: 'A', selection: '  hi  ' }, [])).toEqual({
      url: 'https://a.example/p',
      title: 'A',
      blocks: [],
      selection: 'hi',
    });
    expect(selectionAttachment({ url: 'https://a.example/p', selection: 'x'.repeat(9000) }, []).selection).toHaveLength(8000);
    expect(() => selectionAttachment({ url: 'https://a.example/p', selection: 'x' }, ['a.example'])).toThrow(/never to read/);
    expect(() => selectionAttachment({ url: 'https://a.example/p', selection: '   ' }, [])).toThrow(/Nothing is selected/);
  });
});
