/**
 * The build guard against remote code (scripts/build/no-remote-code.ts): the CDN URL finder, the
 * rewrites of library defaults, and the build failing on any code-CDN URL left in a chunk.
 */
import { describe, expect, it } from 'vitest';
import { findCodeCdnUrls, noRemoteCode, REWRITES } from '../../scripts/build/no-remote-code';

describe('findCodeCdnUrls', () => {
  it('finds code-CDN URLs with or without a scheme, and ignores other hosts', () => {
    const text = [
      'a="https://cdn.jsdelivr.net/npm/x@1/dist/x.js"',
      "b='//unpkg.com/y@2'",
      'c=`https://esm.sh/react`',
      'd="https://cdnjs.cloudflare.com/ajax/libs/z.min.js"',
      'e="https://huggingface.co/Xenova/model/resolve/main/onnx/model.onnx"',
      'f="https://notunpkg.community/x"',
    ].join('\n');
    expect(findCodeCdnUrls(text).map((h) => h.url)).toEqual([
      'https://cdn.jsdelivr.net/npm/x@1/dist/x.js',
      '//unpkg.com/y@2',
      'https://esm.sh/react',
      'https://cdnjs.cloudflare.com/ajax/libs/z.min.js',
    ]);
    const [first] = findCodeCdnUrls('   var p = "https://ga.jspm.io/npm:a@1/index.js";');
    expect(first!.context).toContain('var p = ');
  });
});

describe('the no-remote-code Vite plugin', () => {
  const plugin = noRemoteCode();
  const renderChunk = plugin.renderChunk as (code: string) => { code: string } | null;

  it("rewrites transformers.js's ONNX CDN default to the packaged /runtime/ort/ (minified and not)", () => {
    const minified = 'let e=`https://cdn.jsdelivr.net/npm/onnxruntime-web@${Zu.versions.web}/dist/`,t=`.asyncify`;';
    expect(renderChunk(minified)!.code).toBe('let e=`/runtime/ort/`,t=`.asyncify`;');
    const source = 'const wasmPathPrefix = `https://cdn.jsdelivr.net/npm/onnxruntime-web@${ONNX_ENV.versions.web}/dist/`;';
    expect(findCodeCdnUrls(renderChunk(source)!.code)).toEqual([]);
  });

  it("rewrites wllama's compat-mode CDN defaults to paths inside the package", () => {
    const chunk =
      'dW={worker:`https://cdn.jsdelivr.net/npm/@wllama/wllama-compat@3.13.0/wasm/wllama.js`,wasm:`https://cdn.jsdelivr.net/npm/@wllama/wllama-compat@3.13.0/wasm/wllama.wasm`};' +
      'x={default:"https://cdn.jsdelivr.net/npm/@wllama/wllama@3.13.0/esm/wasm/wllama.wasm"}';
    const out = renderChunk(chunk)!.code;
    expect(out).toBe(
      'dW={worker:`/runtime/not-packaged/wllama-compat/wllama.js`,wasm:`/runtime/not-packaged/wllama-compat/wllama.wasm`};x={default:"/runtime/not-packaged/wllama/wllama.wasm"}',
    );
    expect(REWRITES.map((r) => r.library)).toEqual(['@huggingface/transformers', '@wllama/wllama']);
  });

  it('fails the build on any other code-CDN URL, naming the chunk and the text around it', () => {
    const errors: string[] = [];
    const ctx = { error: (message: string) => errors.push(message) };
    const generateBundle = plugin.generateBundle as (this: typeof ctx, o: unknown, b: Record<string, unknown>) => void;
    generateBundle.call(
      ctx,
      {},
      {
        'chunks/a.js': { type: 'chunk', code: 'import("https://unpkg.com/evil@1/index.js")' },
        'chunks/b.js': { type: 'chunk', code: 'const ok = "/runtime/ort/";' },
      },
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('chunks/a.js: https://unpkg.com/evil@1/index.js');
    expect(errors[0]).not.toContain('chunks/b.js');
    errors.length = 0;
    generateBundle.call(ctx, {}, { 'chunks/b.js': { type: 'chunk', code: 'const ok = "/runtime/ort/";' } });
    expect(errors).toEqual([]);
  });
});
