/**
 * Checks the vector scan's WebAssembly kernel in real Chromium (issue 9): finds the kernel's bytes in
 * the built package (which chunk holds them), loads the build in headless Chromium, attaches to the
 * offscreen document over the DevTools protocol (where the memory core and the scan run) and there,
 * under the extension's CSP: compiles the module, codes 100k random 384-d unit vectors (`encode`),
 * times 20 bound passes over them (`bounds`), times a plain JS scan for scale, and counts the slots
 * whose exact score falls outside its bounds (must be 0). Prints one JSON line.
 * Run: `npm run build && npx tsx scripts/check-scan-kernel-chromium.ts`.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BUILD_DIR, startExtensionSession, waitForCore } from '../tests/e2e/harness';
import { SCAN_WASM_BASE64 } from '../src/memory/long-term/retrieval/blocks/kernel/scan-wasm';

const files = (d: string): string[] => readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? files(join(d, f)) : [join(d, f)]));
const holders = files(BUILD_DIR).filter((f) => f.endsWith('.js') && readFileSync(f, 'utf8').includes(SCAN_WASM_BASE64));
console.log(
  'bundled in:',
  holders.map((f) => f.slice(BUILD_DIR.length)),
);
console.log('manifest CSP:', JSON.parse(readFileSync(join(BUILD_DIR, 'manifest.json'), 'utf8')).content_security_policy);

const session = await startExtensionSession();
try {
  const page = await session.browser.openPanel();
  await waitForCore(page);
  const cdp = await session.browser.context.browser()!.newBrowserCDPSession();
  const { targetInfos } = (await cdp.send('Target.getTargets')) as { targetInfos: { targetId: string; type: string; url: string }[] };
  const off = targetInfos.find((t) => t.url.endsWith('/offscreen.html'));
  if (!off) throw new Error('no offscreen document: ' + JSON.stringify(targetInfos.map((t) => t.url)));
  const { sessionId } = (await cdp.send('Target.attachToTarget', { targetId: off.targetId, flatten: false })) as { sessionId: string };
  const expr = `(() => {
    const bin = atob(${JSON.stringify(SCAN_WASM_BASE64)}); const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    let t = performance.now(); const mod = new WebAssembly.Module(bytes); const compileMs = performance.now() - t;
    const n = 100000, dim = 384, stride = 384, S = 256;
    const area = S * (stride + 20), qb = 768, base = qb + S * dim * 4;
    const mem = new WebAssembly.Memory({ initial: Math.ceil((base + Math.ceil(n / S) * area) / 65536) });
    const k = new WebAssembly.Instance(mod, { env: { memory: mem } }).exports;
    const f32 = new Float32Array(mem.buffer), i16 = new Int16Array(mem.buffer);
    let seed = 7; const rnd = () => { seed = (seed * 1103515245 + 12345) >>> 0; return seed / 4294967296 - 0.5; };
    const unit = () => { const v = new Float32Array(dim); let s = 0; for (let i = 0; i < dim; i++) { v[i] = rnd(); s += v[i] * v[i]; } s = Math.sqrt(s); for (let i = 0; i < dim; i++) v[i] /= s; return v; };
    const data = new Float32Array(n * dim); for (let i = 0; i < n; i++) data.set(unit(), i * dim);
    t = performance.now();
    for (let b = 0; b * S < n; b++) { f32.set(data.subarray(b * S * dim, (b + 1) * S * dim), qb >> 2); k.encode(qb, S, dim, base + b * area, stride, base + b * area + S * stride); }
    const encodeMs = performance.now() - t;
    const q = unit(); let max = 0, nq = 0; for (const x of q) { max = Math.max(max, Math.abs(x)); nq += x * x; }
    const qs = max / 32767; let eq = 0; for (let i = 0; i < dim; i++) { const d = Math.round(q[i] / qs); i16[i] = d; eq += (q[i] - qs * d) ** 2; }
    const up = (x) => Math.fround(x * (1 + 2 ** -20)); const norm = up(Math.sqrt(nq));
    const times = [];
    for (let r = 0; r < 20; r++) { t = performance.now(); for (let b = 0; b * S < n; b++) k.bounds(base + b * area, base + b * area + S * stride, base + b * area + S * (stride + 12), S, stride, 0, qs, norm, up(Math.sqrt(eq)), 2 ** -20 * (norm + 1)); times.push(performance.now() - t); }
    times.sort((a, b) => a - b);
    let bad = 0; for (let i = 0; i < n; i++) { let e = 0; for (let j = 0; j < dim; j++) e += q[j] * data[i * dim + j];
      const o = (base + (i >> 8) * area + S * (stride + 12)) / 4 + 2 * (i & 255); if (!(f32[o] <= e && e <= f32[o + 1])) bad++; }
    t = performance.now(); let best = -2; for (let i = 0; i < n; i++) { let e = 0; for (let j = 0; j < dim; j++) e += q[j] * data[i * dim + j]; if (e > best) best = e; } const jsScanMs = performance.now() - t;
    return { simd: true, compileMs, encodeMs100k: encodeMs, boundsMs100kMedian: times[10], boundsMs100kMin: times[0], jsScanMs100k: jsScanMs, boundsViolations: bad };
  })()`;
  const res = await new Promise<{ result?: { value?: unknown } }>((resolve) => {
    cdp.on('Target.receivedMessageFromTarget', (event) => {
      const m = JSON.parse(event.message) as { id?: number; result?: { result?: { value?: unknown } } };
      if (m.id === 4242) resolve(m.result ?? {});
    });
    void cdp.send('Target.sendMessageToTarget', {
      sessionId,
      message: JSON.stringify({ id: 4242, method: 'Runtime.evaluate', params: { expression: expr, returnByValue: true } }),
    });
  });
  console.log('offscreen document:', JSON.stringify(res.result?.value ?? res));
  console.log('console errors:', session.browser.console.errors);
} finally {
  await session.dispose();
}
