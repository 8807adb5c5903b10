/**
 * The engines in the built extension, in real headless Chromium (no GPU, no network: every
 * request goes to a counting proxy that refuses it):
 * - transformers.js embeds with a model shipped inside the package, using the packaged ONNX
 *   runtime (no CDN);
 * - wllama (llama.cpp WASM) loads the real stories260K GGUF from OPFS and generates, with the
 *   ChatML template added because that GGUF has none; a non-GGUF file fails with a clear error
 *   and the engine still loads a good file afterwards;
 * - WebLLM reports a clear "no WebGPU" error offering the CPU engine; its service-worker handler
 *   answers on WebLLM's port.
 * Build first: `RECALL_OUT_DIR=.output-engines npx wxt build`, then
 * `RECALL_OUT_DIR=.output-engines npx vitest run --config vitest.e2e.config.ts tests/e2e/engines.test.ts`.
 */
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCore, FIXTURE_GGUF as GGUF, PACKAGED_EMBEDDING_MODEL as EMBEDDING_MODEL, startExtensionSession, type ExtensionSession } from './harness';

if (!GGUF) console.warn('[e2e engines] ../shared/fixtures is absent: skipping (needs the fixture GGUF).');

interface Status {
  chat: { kind: string | null; modelId: string | null; state: string; contextWindow: number | null; error: string | null };
  embedder: { modelId: string | null; dimension: number | null; state: string; error: string | null };
  gpu: { available: boolean };
}

/** Writes bytes into OPFS `models/<name>` from an extension page (same origin as the core). */
async function writeOpfs(page: Page, name: string, bytes: Uint8Array): Promise<void> {
  await page.evaluate(
    async ([fileName, base64]) => {
      const data = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('models', { create: true });
      const writable = await (await dir.getFileHandle(fileName, { create: true })).createWritable();
      await writable.write(data);
      await writable.close();
    },
    [name, Buffer.from(bytes).toString('base64')] as const,
  );
}

async function waitFor(page: Page, predicate: (s: Status) => boolean, timeoutMs = 60_000): Promise<Status> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await callCore<Status>(page, 'engine.status');
    if (predicate(status)) return status;
    if (Date.now() > deadline) throw new Error(`engine status never matched: ${JSON.stringify(status)}`);
    await page.waitForTimeout(200);
  }
}

describe.skipIf(!GGUF)('engines in a real browser', () => {
  let session: ExtensionSession;
  let page: Page;

  beforeAll(async () => {
    session = await startExtensionSession();
    page = await session.browser.openPanel();
    await callCore(page, 'core.ensure');
  });
  afterAll(() => session?.dispose());

  it('embeds with the model shipped in the package and the packaged ONNX runtime', async () => {
    const status = await waitFor(page, (s) => s.embedder.state !== 'loading' && s.embedder.state !== 'idle');
    expect(status.embedder).toMatchObject({ modelId: EMBEDDING_MODEL, dimension: 64, state: 'ready', error: null });
  });

  it('rejects a file that is not a GGUF, then loads the real GGUF from OPFS on the CPU engine', async () => {
    await writeOpfs(page, 'notes.gguf', new TextEncoder().encode('these are my notes, not a model'));
    await callCore(page, 'models.registerLocal', { fileName: 'notes.gguf', displayName: 'notes.gguf', sizeBytes: 31 });
    await expect(callCore(page, 'engine.loadWllama', { source: { type: 'opfs', fileName: 'notes.gguf' } })).rejects.toThrow(/not a GGUF model file/);

    const bytes = new Uint8Array(readFileSync(GGUF!));
    await writeOpfs(page, 'stories260K.gguf', bytes);
    await callCore(page, 'models.registerLocal', { fileName: 'stories260K.gguf', displayName: 'stories260K', sizeBytes: bytes.byteLength });
    const status = await callCore<Status>(page, 'engine.loadWllama', { source: { type: 'opfs', fileName: 'stories260K.gguf' } });
    expect(status.chat).toMatchObject({ kind: 'wllama', modelId: 'stories260K.gguf', state: 'ready', contextWindow: 2048 });

    // A copy cut off after 100 KB (an interrupted copy) is refused, and the working model stays loaded.
    await writeOpfs(page, 'cut.gguf', bytes.subarray(0, 102_400));
    await callCore(page, 'models.registerLocal', { fileName: 'cut.gguf', displayName: 'cut.gguf', sizeBytes: 102_400 });
    await expect(callCore(page, 'engine.loadWllama', { source: { type: 'opfs', fileName: 'cut.gguf' } })).rejects.toThrow(/truncated or corrupt/);
    const after = await callCore<Status>(page, 'engine.status');
    expect(after.chat).toMatchObject({ kind: 'wllama', modelId: 'stories260K.gguf', state: 'ready', contextWindow: 2048 });
  });

  it('generates streamed text with the CPU engine (ChatML template added to a GGUF without one)', async () => {
    await page.evaluate(() => {
      (globalThis as { __deltas?: number }).__deltas = 0;
      chrome.runtime.onMessage.addListener((m: { type?: string }) => {
        if (m?.type === 'event.chatDelta') (globalThis as { __deltas?: number }).__deltas! += 1;
      });
    });
    const conversation = await callCore<{ id: string }>(page, 'conversations.create', { title: 'engines e2e' });
    const turn = await callCore<{ assistantMessage: { content: string; status: string; modelId?: string } }>(page, 'chat.send', {
      conversationId: conversation.id,
      text: 'Once upon a time',
      requestId: 'engines-e2e-1',
    });
    expect(turn.assistantMessage.status).toBe('complete');
    expect(turn.assistantMessage.content.trim().length).toBeGreaterThan(0);
    expect(await page.evaluate(() => (globalThis as { __deltas?: number }).__deltas ?? 0)).toBeGreaterThan(1);
  });

  it('without WebGPU, the GPU engine fails with a message that offers the CPU engine', async () => {
    const status = await callCore<Status>(page, 'engine.status');
    expect(status.gpu.available).toBe(false);
    await expect(callCore(page, 'engine.loadWebLLM', { modelId: 'Qwen2.5-1.5B-Instruct-q4f16_1-MLC' })).rejects.toThrow(/WebGPU is not available.*CPU engine/);
  });

  it("hosts WebLLM's engine handler in the service worker (answers on WebLLM's port)", async () => {
    const reply = await page.evaluate(
      () =>
        new Promise<{ kind: string; content: unknown }>((resolve) => {
          const port = chrome.runtime.connect({ name: 'web_llm_service_worker' });
          port.onMessage.addListener((m: { kind: string; uuid: string; content: unknown }) => {
            if (m.uuid === 'probe-1') resolve(m);
          });
          port.postMessage({ kind: 'getGPUVendor', uuid: 'probe-1', content: null });
        }),
    );
    // No model is loaded and there is no GPU: WebLLM's handler answers with its own error.
    expect(reply.kind).toBe('throw');
  });

  it('sent nothing over the network (Chromium itself still calls Google update/account services)', () => {
    const browserOwn = /^(https?:\/\/)?[\w.-]*\.(google\.com|googleapis\.com|gstatic\.com)(:\d+)?(\/|$)/;
    expect(session.proxy.requests.filter((r) => !browserOwn.test(r.target))).toEqual([]);
  });

  it('logged no errors in the extension', () => {
    expect(session.browser.console.errors).toEqual([]);
  });
});
