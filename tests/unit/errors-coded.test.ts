/**
 * Coded errors (src/model/errors.ts): every code of every domain has its sentence in English and
 * Simplified Chinese, and an error thrown in the core reaches the panel with its domain, code and
 * params, through the real messaging path, and is shown as its translated sentence.
 *
 * The message path is real: the panel's `request` (src/ui/state/api.ts) → `@webext-core/messaging`
 * → `runtime.sendMessage` → the core's handlers (`registerCoreHandlers`, sender check included) →
 * the whole core (`createCore`: Dexie on fake-indexeddb, job queue, long-term store) → the error
 * serialized by the messaging and rebuilt on the panel side. Faked boundaries, because Node has
 * none of them: the runtime messaging itself is WXT's in-memory fake browser, given the side
 * panel's sender (its own `sendMessage` sends none); OPFS is the in-memory stand-in of
 * tests/helpers/fixture-opfs.ts; the GPU probe answers "no WebGPU"; the chat model is scripted
 * (tests/helpers/scripted-engine.ts); the disk-full case is a `QuotaExceededError` from one
 * IndexedDB insert, as the browser reports it.
 */
import { deserializeError, serializeError } from '@aklinker1/zero-serialize-error';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import { createEngineManager, type EngineManager } from '../../src/core/engine-manager';
import { registerCoreHandlers } from '../../src/core/handlers';
import { createCore, type Core } from '../../src/core/index';
import { RecallDB } from '../../src/db/schema';
import type { ChatEngine } from '../../src/engines/types';
import { DEFAULT_NAMESPACE, MAX_MEMORY_TEXT_CHARS } from '../../src/model/memory';
import type { EngineStatus } from '../../src/model/engine';
import { removeAllListeners } from '../../src/messaging/protocol';
import {
  BackupError,
  codedErrorOf,
  EngineError,
  ERROR_CODES,
  HistoryImportError,
  JobError,
  MemoryError,
  MessagingError,
  ModelFileError,
  PageError,
  VaultError,
  PromptError,
  RecallError,
  StorageError,
  type ErrorDomain,
  type RecallErrorOptions,
} from '../../src/model/errors';
import { createTokenEstimator } from '../../src/tokens';
import { changeUiLanguage } from '../../src/ui/i18n/instance';
import en from '../../src/ui/i18n/locales/en.json';
import zhCN from '../../src/ui/i18n/locales/zh_CN.json';
import { stageImportFile } from '../../src/ui/lib/import-file';
import { errorKey, errorText, replyErrorView } from '../../src/ui/lib/errors';
import { jobLabelKey, jobRejectionViews } from '../../src/ui/lib/jobs';
import { translate } from '../../src/ui/i18n/instance';
import { request } from '../../src/ui/state/api';
import { createMemoryStore } from '../../src/ui/state/memory.svelte';
import { createNoticesStore } from '../../src/ui/state/notices.svelte';
import { createFakeOpfs } from '../helpers/fixture-opfs';
import { createScriptedEngine } from '../helpers/scripted-engine';
import { rejection } from '../helpers/rejection';

type Tree = { [key: string]: string | Tree };
const lookup = (tree: Tree, key: string): string | undefined => {
  let node: string | Tree | undefined = tree;
  for (const part of key.split('.')) node = typeof node === 'object' ? node[part] : undefined;
  return typeof node === 'string' ? node : undefined;
};
const placeholders = (text: string) => [...text.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]!).sort();

describe('error codes and their sentences', () => {
  const all = Object.entries(ERROR_CODES).flatMap(([domain, codes]) => codes.map((code) => [domain as ErrorDomain, code] as const));

  it('every code of every domain has a sentence in English and in Chinese, with the same placeholders', () => {
    expect(all.length).toBeGreaterThan(40);
    for (const [domain, code] of all) {
      const key = errorKey(domain, code);
      const english = lookup(en as Tree, key);
      const chinese = lookup(zhCN as Tree, key);
      expect(english?.trim(), key).toBeTruthy();
      expect(chinese?.trim(), key).toBeTruthy();
      expect(chinese, key).not.toBe(english);
      expect(/[\u4e00-\u9fff]/.test(chinese!), key).toBe(true);
      expect(placeholders(chinese!), key).toEqual(placeholders(english!));
    }
  });

  it('has no translation left over for a code that does not exist', () => {
    const codes = en.errorCodes as unknown as Record<string, Record<string, string>>;
    for (const [domain, sentences] of Object.entries(codes)) {
      expect(Object.keys(sentences).sort(), domain).toEqual([...ERROR_CODES[domain as ErrorDomain]].sort());
    }
  });

  it('each domain class is a RecallError of its domain, named after itself, with its code, params and cause', () => {
    const classes = [
      [EngineError, 'engine'],
      [StorageError, 'storage'],
      [ModelFileError, 'modelFile'],
      [BackupError, 'backup'],
      [HistoryImportError, 'historyImport'],
      [MemoryError, 'memory'],
      [MessagingError, 'messaging'],
      [PromptError, 'prompt'],
      [JobError, 'jobs'],
      [PageError, 'page'],
      [VaultError, 'vault'],
    ] as const;
    expect(classes.map(([, domain]) => domain).sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const [Class, domain] of classes) {
      const code = ERROR_CODES[domain][0];
      const cause = new Error('under it');
      const error = new (Class as new (code: string, message: string, options?: RecallErrorOptions) => RecallError)(code, 'English', {
        cause,
        params: { n: 1 },
      });
      expect(error).toBeInstanceOf(RecallError);
      expect(error).toBeInstanceOf(Class);
      expect([error.name, error.domain, error.code, error.message, error.params, error.cause]).toEqual([Class.name, domain, code, 'English', { n: 1 }, cause]);
    }
  });

  it("keeps domain, code and params through @webext-core/messaging's error serialization", () => {
    const thrown = new MemoryError('text_too_long', 'too long', { params: { chars: 9000, maxChars: 8000 } });
    const received = deserializeError(JSON.parse(JSON.stringify(serializeError(thrown))));
    expect(received).not.toBeInstanceOf(MemoryError);
    expect(codedErrorOf(received)).toEqual({ domain: 'memory', code: 'text_too_long', params: { chars: 9000, maxChars: 8000 } });
    expect(codedErrorOf(deserializeError(serializeError(new Error('plain'))))).toBeNull();
    // A code that is not in its domain's list is not trusted.
    expect(codedErrorOf(Object.assign(new Error('x'), { domain: 'memory', code: 'download' }))).toBeNull();
  });
});

// ── through the real message path ─────────────────────────────────────────────

const PANEL_SENDER = { id: fakeBrowser.runtime.id, url: `chrome-extension://${fakeBrowser.runtime.id}/sidepanel.html` };

/** Engines with no models (status only) whose `loadWebLLM` is the real manager's, on a device without WebGPU. */
function enginesWithoutGpu(db: RecallDB, current: () => ChatEngine | null): EngineManager {
  const real = createEngineManager({
    db,
    assets: { wllamaWasmUrl: '', packagedModelsUrl: '', packagedEmbeddingModels: [], packagedWebllmLibs: [] },
    probe: async () => ({ available: false, shaderF16: false, adapter: null }),
  });
  const status = (): EngineStatus => {
    const chat = current();
    return {
      chat: {
        kind: chat ? 'scripted' : null,
        modelId: chat?.modelId ?? null,
        state: chat ? 'ready' : 'idle',
        progress: null,
        contextWindow: chat?.contextWindow() ?? null,
        error: null,
        errorCode: null,
      },
      embedder: { modelId: null, dimension: null, state: 'idle', progress: null, error: null, errorCode: null },
      gpu: { available: false, shaderF16: false, adapter: null },
    } as EngineStatus;
  };
  const estimator = createTokenEstimator();
  const unsupported = () => Promise.reject(new Error('not in this test'));
  return {
    status,
    chatEngine: () => current(),
    embedder: () => null,
    tokenCounter: () => estimator,
    catalog: unsupported,
    loadWebLLM: (modelId) => real.loadWebLLM(modelId),
    loadWllama: unsupported,
    unloadChat: unsupported,
    loadEmbedder: async () => status(),
    reloadEmbedder: async () => status(),
    onChange: () => () => undefined,
  };
}

describe('a coded error from each domain reaches the panel as its translated sentence', () => {
  const opfs = createFakeOpfs();
  const db = new RecallDB(`errors-coded-${crypto.randomUUID()}`);
  // A model with a 64-token window (a long message cannot fit the prompt); a test may load another.
  let chat: ChatEngine = createScriptedEngine({ contextWindow: 64, fallback: 'ok' });
  let core: Core;
  let unregister: () => void;

  beforeAll(async () => {
    vi.spyOn(fakeBrowser.runtime, 'sendMessage').mockImplementation((async (message: unknown) => {
      const replies = await fakeBrowser.runtime.onMessage.trigger(message, PANEL_SENDER);
      return replies.find((reply: unknown) => reply !== undefined);
    }) as never);
    core = await createCore({
      db,
      engines: enginesWithoutGpu(db, () => chat),
      loadVoyWasm: async () => (await nodeVoyWasm()) as Uint8Array<ArrayBuffer>,
      events: { chatDelta: () => undefined, jobs: () => undefined },
      fileRoot: opfs.root,
    });
    unregister = registerCoreHandlers(Promise.resolve(core), Date.now());
  });
  afterAll(async () => {
    unregister();
    removeAllListeners();
    vi.restoreAllMocks();
    await core.stop();
    await db.delete();
  });
  afterEach(() => changeUiLanguage('en'));

  /** `errorText(error)` in English and in Chinese. */
  async function bothLanguages(error: unknown): Promise<[string, string]> {
    const english = errorText(error);
    await changeUiLanguage('zh-CN');
    const chinese = errorText(error);
    await changeUiLanguage('en');
    return [english, chinese];
  }

  it('memory: a too-long memory added from the memory manager, as the notice under "Could not add the memory"', async () => {
    const notices = createNoticesStore();
    const memory = createMemoryStore({
      request,
      subscribe: () => () => undefined,
      notices,
      namespace: () => DEFAULT_NAMESPACE,
      refreshConversations: async () => undefined,
      beforeEraseAll: () => () => undefined,
      afterEraseAll: async () => undefined,
    });
    const length = MAX_MEMORY_TEXT_CHARS + 1;
    expect(await memory.add('fact', 'x'.repeat(length))).toBe(false);
    expect(notices.list.map((n) => [n.text, n.detail])).toEqual([
      ['Could not add the memory:', 'This memory is 8001 characters long; a memory can hold at most 8000. Shorten it; nothing was saved.'],
    ]);
    await changeUiLanguage('zh-CN');
    expect(await memory.add('fact', 'x'.repeat(length))).toBe(false);
    expect(notices.list.at(-1)!.detail).toBe('这条记忆有 8001 个字符，一条记忆最多只能容纳 8000 个字符。请缩短后再试，本次未保存任何内容。');
    expect(await db.memories.count()).toBe(0);
  });

  it('memory: a memory that does not exist', async () => {
    const error = await rejection(request('memory.update', { id: 'no-such-id', text: 'new text' }));
    expect(codedErrorOf(error)).toMatchObject({ domain: 'memory', code: 'not_found' });
    expect(await bothLanguages(error)).toEqual(['That memory no longer exists.', '这条记忆已不存在。']);
  });

  it('messaging: an empty message, and a message longer than the core accepts', async () => {
    const { id } = await request('conversations.create', {});
    const empty = await rejection(request('chat.send', { conversationId: id, text: '   ', requestId: 'r1' }));
    expect(await bothLanguages(empty)).toEqual(['The message is empty.', '消息是空的。']);
    const tooLong = await rejection(request('chat.send', { conversationId: id, text: 'y'.repeat(MAX_MEMORY_TEXT_CHARS * 10), requestId: 'r2' }));
    expect(codedErrorOf(tooLong)).toMatchObject({ domain: 'messaging', code: 'message_too_long' });
    const chars = (codedErrorOf(tooLong)!.params.chars as number).toString();
    expect(chars).toBe(String(MAX_MEMORY_TEXT_CHARS * 10));
  });

  it('memory: a conversation that no longer exists', async () => {
    const error = await rejection(request('chat.send', { conversationId: 'gone', text: 'hello', requestId: 'r3' }));
    expect(await bothLanguages(error)).toEqual(['That conversation no longer exists.', '该对话已不存在。']);
  });

  it('backup: a backup file of a newer format version, with the versions in the sentence', async () => {
    const fileName = await stageImportFile(new Blob([JSON.stringify({ format: 'recall-export', version: 7, memories: [] })]), undefined, { root: opfs.root });
    const error = await rejection(request('memory.import', { fileName }));
    expect(codedErrorOf(error)).toEqual({ domain: 'backup', code: 'unsupported_version', params: { version: '7', supported: 2 } });
    expect(await bothLanguages(error)).toEqual([
      'This backup has version 7; this version of Recall reads versions up to 2. Nothing was imported.',
      '此备份的版本为 7，当前版本的 Recall 最高只能读取版本 2。未导入任何内容。',
    ]);
  });

  it('modelFile: importing a staged file that is not there', async () => {
    const error = await rejection(request('memory.import', { fileName: 'import-never-staged.json' }));
    expect(await bothLanguages(error)).toEqual(["The file is no longer in the browser's storage.", '浏览器存储中已没有这个文件。']);
  });

  it('engine: a GPU model on a device without WebGPU', async () => {
    const error = await rejection(request('engine.loadWebLLM', { modelId: 'Qwen2.5-0.5B-Instruct-q4f16_1-MLC' }));
    expect(codedErrorOf(error)).toMatchObject({ domain: 'engine', code: 'no_webgpu' });
    expect(await bothLanguages(error)).toEqual([
      'This browser offers no WebGPU, so GPU models cannot run here. Use the CPU engine.',
      '这个浏览器不提供 WebGPU，无法在此运行 GPU 模型。请改用 CPU 引擎。',
    ]);
  });

  it('storage: a full disk when the user message is stored', async () => {
    const { id } = await request('conversations.create', {});
    // IndexedDB's answer when storage is full: the insert (and its transaction) fails with QuotaExceededError.
    const full = () => {
      throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    };
    db.messages.hook('creating', full);
    const error = await rejection(request('chat.send', { conversationId: id, text: 'hi', requestId: 'r4' }));
    db.messages.hook('creating').unsubscribe(full);
    expect(codedErrorOf(error)).toMatchObject({ domain: 'storage', code: 'storage_full' });
    const [english, chinese] = await bothLanguages(error);
    expect(english).toMatch(/^Storage is full: nothing of this change was saved\./);
    expect(chinese).toMatch(/^存储空间已满/);
  });

  it('messaging: a request from a page that is not the panel is refused, and says so', async () => {
    vi.mocked(fakeBrowser.runtime.sendMessage).mockImplementationOnce((async (message: unknown) => {
      const replies = await fakeBrowser.runtime.onMessage.trigger(message, {
        id: 'another-extension',
        url: 'chrome-extension://another-extension/sidepanel.html',
      });
      return replies.find((reply: unknown) => reply !== undefined);
    }) as never);
    const error = await rejection(request('memory.list', { namespace: DEFAULT_NAMESPACE }));
    expect(await bothLanguages(error)).toEqual([
      "The request was refused: it did not come from this extension's own pages.",
      '请求被拒绝：它并非来自本扩展程序自己的页面。',
    ]);
  });

  it('prompt: a message too long for the model window, as the sentence of the stored error reply', async () => {
    const { id } = await request('conversations.create', {});
    const result = await request('chat.send', { conversationId: id, text: 'word '.repeat(300), requestId: 'r5' });
    const reply = result.assistantMessage;
    expect(reply).toMatchObject({ status: 'error', errorInfo: { domain: 'prompt', code: 'prompt_too_long' } });
    const { neededTokens, availableTokens } = reply.errorInfo!.params;
    // The core's English message names the same numbers.
    expect(reply.error).toBe(
      `The message needs ${neededTokens} tokens but the model has room for ${availableTokens}. Shorten it or load a model with a larger context window.`,
    );
    expect(neededTokens as number).toBeGreaterThan(availableTokens as number);
    const view = replyErrorView(reply);
    expect(translate(view.key, { ...view.params })).toBe(
      `The message needs ${neededTokens} tokens, but the model has room for ${availableTokens}. Shorten it or load a model with a larger context window.`,
    );
    await changeUiLanguage('zh-CN');
    expect(translate(view.key, { ...view.params })).toBe(
      `这条消息需要 ${neededTokens} 个词元，但模型只剩 ${availableTokens} 个词元的空间。请缩短消息，或加载上下文窗口更大的模型。`,
    );
  });

  it('jobs: an extraction that stays unusable is listed with its translated reason', async () => {
    // A model that answers the chat but never returns usable extraction JSON.
    chat = createScriptedEngine({ contextWindow: 4096, fallback: 'no json here' });
    const { id } = await request('conversations.create', {});
    await request('chat.send', { conversationId: id, text: 'My locker is number 12', requestId: 'r6' });
    await vi.waitFor(async () => expect((await request('jobs.stats')).recentRejections.some((f) => f.type === 'ltm.extract')).toBe(true), {
      timeout: 10_000,
      interval: 50,
    });
    const failure = jobRejectionViews(await request('jobs.stats')).find((f) => f.label === jobLabelKey('ltm.extract'))!;
    expect(failure.reason).toMatch(/^Memory extraction failed after (\d+) attempts/);
    const attempts = /after (\d+) attempts/.exec(failure.reason)![1];
    expect(failure.reasonView).toEqual({ key: 'errorCodes.jobs.extraction_failed', params: { attempts: Number(attempts) } });
    expect(translate(failure.reasonView!.key, { ...failure.reasonView!.params })).toBe(
      `No memories could be read from the model's answer after ${attempts} tries.`,
    );
    await changeUiLanguage('zh-CN');
    expect(translate(failure.reasonView!.key, { ...failure.reasonView!.params })).toBe(`尝试 ${attempts} 次后，仍无法从模型的回答中提取记忆。`);
  });
});
