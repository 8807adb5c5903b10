/**
 * Writes small but well-formed GGUF files at test time (format: ggml-org/ggml `docs/gguf.md`,
 * version 3, little-endian): header, metadata key/values, tensor infos, alignment padding and
 * F32 tensor data. Enough for header readers (`inspectGguf`); the tensors are not a working model.
 */

/** A metadata value: strings, unsigned 32-bit integers, or arrays of strings. */
export type GgufValue = string | number | string[];

const TYPE_UINT32 = 4;
const TYPE_STRING = 8;
const TYPE_ARRAY = 9;
const GGML_TYPE_F32 = 0;
const ALIGNMENT = 32;

class Writer {
  private parts: Uint8Array[] = [];
  size = 0;
  bytes(b: Uint8Array) {
    this.parts.push(b);
    this.size += b.byteLength;
  }
  u32(v: number) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, v, true);
    this.bytes(b);
  }
  u64(v: number) {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, BigInt(v), true);
    this.bytes(b);
  }
  str(s: string) {
    const b = new TextEncoder().encode(s);
    this.u64(b.byteLength);
    this.bytes(b);
  }
  concat(): Uint8Array<ArrayBuffer> {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.byteLength;
    }
    return out;
  }
}

/**
 * Builds a GGUF file.
 * @param metadata key → value (numbers are written as UINT32).
 * @param tensors F32 tensors by name and shape (data are zeros).
 */
export function buildGguf(
  metadata: Record<string, GgufValue>,
  tensors: { name: string; dims: number[] }[] = [{ name: 'token_embd.weight', dims: [4, 8] }],
): Uint8Array<ArrayBuffer> {
  const w = new Writer();
  w.bytes(new TextEncoder().encode('GGUF'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(Object.keys(metadata).length);
  for (const [key, value] of Object.entries(metadata)) {
    w.str(key);
    if (typeof value === 'string') {
      w.u32(TYPE_STRING);
      w.str(value);
    } else if (typeof value === 'number') {
      w.u32(TYPE_UINT32);
      w.u32(value);
    } else {
      w.u32(TYPE_ARRAY);
      w.u32(TYPE_STRING);
      w.u64(value.length);
      value.forEach((s) => w.str(s));
    }
  }
  let offset = 0;
  const sizes = tensors.map((t) => t.dims.reduce((a, b) => a * b, 1) * 4);
  tensors.forEach((t, i) => {
    w.str(t.name);
    w.u32(t.dims.length);
    t.dims.forEach((d) => w.u64(d));
    w.u32(GGML_TYPE_F32);
    w.u64(offset);
    offset += Math.ceil(sizes[i]! / ALIGNMENT) * ALIGNMENT;
  });
  const pad = (ALIGNMENT - (w.size % ALIGNMENT)) % ALIGNMENT;
  w.bytes(new Uint8Array(pad));
  w.bytes(new Uint8Array(offset));
  return w.concat();
}

/** A GGUF `Blob` for a llama-architecture model with the given context length and optional chat template. */
export function ggufBlob(options: { contextLength?: number; chatTemplate?: string; name?: string } = {}): Blob {
  const metadata: Record<string, GgufValue> = {
    'general.architecture': 'llama',
    'general.name': options.name ?? 'fixture',
    'llama.context_length': options.contextLength ?? 2048,
    'tokenizer.ggml.model': 'llama',
    'tokenizer.ggml.tokens': ['<unk>', '<s>', '</s>', 'a', 'b'],
  };
  if (options.chatTemplate) metadata['tokenizer.chat_template'] = options.chatTemplate;
  return new Blob([buildGguf(metadata)]);
}
