/**
 * GGUF header check (src/ui/lib/gguf.ts), on hand-made headers and on the real fixture model
 * (../shared/fixtures/models/stories260K/stories260K.gguf, GGUF v3; skipped when absent).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkGgufHeader, hasGgufExtension, inspectGgufFile } from '../../src/ui/lib/gguf';

const FIXTURE = resolve(__dirname, '../../../shared/fixtures/models/stories260K/stories260K.gguf');
const hasFixture = existsSync(FIXTURE);
if (!hasFixture) console.warn(`[ui-gguf] ${FIXTURE} is absent: skipping the real-file check.`);

/** "GGUF" then a little-endian uint32 version. */
const header = (version: number, magic = [0x47, 0x47, 0x55, 0x46]) => {
  const bytes = new Uint8Array(8);
  bytes.set(magic, 0);
  new DataView(bytes.buffer).setUint32(4, version, true);
  return bytes;
};

describe('checkGgufHeader', () => {
  it('accepts versions 1 to 3', () => {
    expect(checkGgufHeader(header(3))).toEqual({ ok: true, version: 3 });
    expect(checkGgufHeader(header(1))).toEqual({ ok: true, version: 1 });
  });
  it('rejects other files with a reason', () => {
    expect(checkGgufHeader(new Uint8Array([0x47, 0x47]))).toEqual({ ok: false, reason: 'too_short' });
    // a safetensors file starts with a little-endian header length, a zip with "PK"
    expect(checkGgufHeader(header(3, [0x50, 0x4b, 0x03, 0x04]))).toEqual({ ok: false, reason: 'bad_magic' });
    expect(checkGgufHeader(new TextEncoder().encode('{"not":"a model"}'))).toEqual({ ok: false, reason: 'bad_magic' });
    expect(checkGgufHeader(header(0))).toEqual({ ok: false, reason: 'bad_version', version: 0 });
    expect(checkGgufHeader(header(4))).toEqual({ ok: false, reason: 'bad_version', version: 4 });
  });
  it('reads the version from a view that does not start at offset 0', () => {
    const buffer = new Uint8Array(16);
    buffer.set(header(2), 5);
    expect(checkGgufHeader(buffer.subarray(5))).toEqual({ ok: true, version: 2 });
  });
});

describe('inspectGgufFile', () => {
  it('reads only the header of a Blob', async () => {
    expect(await inspectGgufFile(new Blob([header(3), new Uint8Array(100)]))).toEqual({ ok: true, version: 3 });
    expect(await inspectGgufFile(new Blob(['hello']))).toEqual({ ok: false, reason: 'too_short' });
  });
  it.skipIf(!hasFixture)('accepts the real stories260K.gguf (GGUF v3)', async () => {
    expect(await inspectGgufFile(new Blob([readFileSync(FIXTURE)]))).toEqual({ ok: true, version: 3 });
  });
});

describe('hasGgufExtension', () => {
  it('matches .gguf in any case only at the end', () => {
    expect(hasGgufExtension('qwen2.5-0.5b-instruct-q4_k_m.gguf')).toBe(true);
    expect(hasGgufExtension('模型.GGUF')).toBe(true);
    expect(hasGgufExtension('model.gguf.part')).toBe(false);
    expect(hasGgufExtension('model.bin')).toBe(false);
  });
});
