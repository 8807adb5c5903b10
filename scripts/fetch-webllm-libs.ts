/**
 * `npm run fetch:webllm-libs`: downloads the compiled WebLLM model libraries (`*-webgpu.wasm`) of
 * every model in the picker (both the q4f16 and q4f32 variants) into `public/runtime/webllm/`, so
 * that the next `npm run build` ships them inside the package and WebLLM loads no code from the
 * network at run time (the engine prefers a packaged library; see `resolvePackagedLib` in
 * src/engines/webllm/engine.ts). Run it, with network access, before building a release.
 *
 * Options: `--out DIR` (default public/runtime/webllm), `--base URL` (replaces WebLLM's
 * `modelLibURLPrefix`, e.g. a mirror or a local server in tests).
 * Exits non-zero, naming the failed files, when any download fails; files already present with
 * the same size are kept.
 */
import { prebuiltAppConfig, modelLibURLPrefix } from '@mlc-ai/web-llm';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { WEBLLM_MODELS } from '../src/engines/webllm/models';

/** Library URLs of the picker's models, f16 and f32 variants (deduplicated). */
export function webllmLibraryUrls(base: string = modelLibURLPrefix): string[] {
  const ids = WEBLLM_MODELS.flatMap((m) => [m.id, m.id.replace('q4f16', 'q4f32')]);
  const urls = ids.map((id) => {
    const record = prebuiltAppConfig.model_list.find((r) => r.model_id === id);
    if (!record) throw new Error(`WebLLM has no prebuilt model ${id}`);
    return record.model_lib.startsWith(modelLibURLPrefix) ? base + record.model_lib.slice(modelLibURLPrefix.length) : record.model_lib;
  });
  return [...new Set(urls)];
}

/** Downloads `urls` into `outDir`. Returns the files written and the failures. */
export async function fetchLibraries(urls: string[], outDir: string): Promise<{ written: string[]; failed: string[] }> {
  mkdirSync(outDir, { recursive: true });
  const written: string[] = [];
  const failed: string[] = [];
  for (const url of urls) {
    const target = join(outDir, basename(new URL(url).pathname));
    try {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const bytes = new Uint8Array(await response.arrayBuffer());
      // A WebAssembly module starts with "\0asm".
      if (bytes[0] !== 0x00 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) throw new Error('not a WebAssembly module');
      if (!(existsSync(target) && statSync(target).size === bytes.byteLength)) writeFileSync(target, bytes);
      written.push(target);
    } catch (error) {
      failed.push(`${url}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return { written, failed };
}

const isMain = process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname);
if (isMain) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const outDir = resolve(arg('--out') ?? 'public/runtime/webllm');
  const { written, failed } = await fetchLibraries(webllmLibraryUrls(arg('--base')), outDir);
  console.log(`${written.length} WebLLM model libraries in ${outDir}`);
  if (failed.length > 0) {
    console.error(`Failed:\n${failed.join('\n')}`);
    process.exit(1);
  }
}
