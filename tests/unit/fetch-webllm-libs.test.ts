/**
 * The release helper that packages WebLLM's model libraries, run against a local HTTP server
 * standing in for GitHub (no network here).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prebuiltAppConfig, modelLibURLPrefix } from '@mlc-ai/web-llm';
import { fetchLibraries, webllmLibraryUrls } from '../../scripts/fetch-webllm-libs';
import { WEBLLM_MODELS } from '../../src/engines/webllm/models';

const WASM = Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
let server: Server;
let base: string;
let dir: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.includes('broken')) return void res.writeHead(200).end('<html>not wasm</html>');
    if (req.url?.endsWith('.wasm')) return void res.writeHead(200, { 'content-type': 'application/wasm' }).end(WASM);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/libs/`;
  dir = await mkdtemp(join(tmpdir(), 'webllm-libs-'));
});
afterAll(async () => {
  server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('fetch-webllm-libs', () => {
  it("lists one library per picker model variant, from WebLLM's own records", () => {
    const urls = webllmLibraryUrls();
    const expected = new Set(
      WEBLLM_MODELS.flatMap((m) => [m.id, m.id.replace('q4f16', 'q4f32')]).map((id) => prebuiltAppConfig.model_list.find((r) => r.model_id === id)!.model_lib),
    );
    expect(new Set(urls)).toEqual(expected);
    for (const url of urls) expect(url.startsWith(modelLibURLPrefix)).toBe(true);
  });

  it('downloads every library into the folder and rejects a file that is not WebAssembly', async () => {
    const urls = webllmLibraryUrls(base);
    const { written, failed } = await fetchLibraries([...urls, `${base}broken-webgpu.wasm`], dir);
    expect(failed).toEqual([`${base}broken-webgpu.wasm: not a WebAssembly module`]);
    expect(written).toHaveLength(urls.length);
    const files = await readdir(dir);
    expect(files.sort()).toEqual(urls.map((u) => u.split('/').pop()!).sort());
    expect(new Uint8Array(await readFile(join(dir, files[0]!)))).toEqual(WASM);
  });
});
