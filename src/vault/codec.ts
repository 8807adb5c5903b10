/**
 * The plaintext of a sealed row: any structured-clone-like value (objects, arrays, strings,
 * numbers, booleans, `null`, typed arrays, `ArrayBuffer`, `Date`, `undefined` properties, NaN and
 * ±Infinity) as bytes, synchronously (it runs inside IndexedDB transactions, see `middleware.ts`).
 *
 * Layout: `u32 LE` length of the JSON part, the JSON (UTF-8), zero padding to a multiple of 8, then
 * the bytes of every typed array / `ArrayBuffer`, each at an offset that is a multiple of 8. The
 * JSON is `[skeleton, patches]`: the value with every non-JSON value replaced by `null`, and one
 * patch per such value, `[path, tag, …]` (`t` typed array: constructor name, offset, byte length;
 * `b` ArrayBuffer: offset, byte length; `d` Date: ms epoch; `u` undefined; `n` NaN/±Infinity), so
 * both directions run the engine's native JSON without a replacer or reviver (a reviver made
 * decoding the 10k index's meta blocks ~3× slower). Maps and Sets are not stored by the app and are
 * refused (a programmer error, thrown as `Error`).
 */

type TypedArrayName =
  | 'Int8Array'
  | 'Uint8Array'
  | 'Uint8ClampedArray'
  | 'Int16Array'
  | 'Uint16Array'
  | 'Int32Array'
  | 'Uint32Array'
  | 'Float32Array'
  | 'Float64Array'
  | 'BigInt64Array'
  | 'BigUint64Array';

const TYPED_ARRAYS: Record<TypedArrayName, new (buffer: ArrayBuffer) => ArrayBufferView> = {
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
};

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const align8 = (n: number) => (n + 7) & ~7;

type Path = (string | number)[];
type Patch = [Path, string, ...(string | number)[]];

/**
 * `value` as bytes (see module doc).
 * @throws Error for a Map, Set or another value the layout cannot hold.
 */
export function encodeValue(value: unknown): Uint8Array {
  const binaries: Uint8Array[] = [];
  const patches: Patch[] = [];
  let binaryBytes = 0;
  const addBinary = (bytes: Uint8Array): number => {
    const offset = binaryBytes;
    binaries.push(bytes);
    binaryBytes = align8(binaryBytes + bytes.byteLength);
    return offset;
  };
  /** The JSON-safe form of `v` (the same object when nothing in it needs a patch). */
  const walk = (v: unknown, path: Path): unknown => {
    if (v === undefined) return (patches.push([path.slice(), 'u']), null);
    if (typeof v === 'number') return Number.isFinite(v) ? v : (patches.push([path.slice(), 'n', String(v)]), null);
    if (typeof v !== 'object' || v === null) return v;
    if (ArrayBuffer.isView(v)) {
      const name = v.constructor.name as TypedArrayName;
      if (!(name in TYPED_ARRAYS)) throw new Error(`codec: cannot store a ${name}`);
      const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
      patches.push([path.slice(), 't', name, addBinary(bytes), bytes.byteLength]);
      return null;
    }
    if (v instanceof ArrayBuffer) return (patches.push([path.slice(), 'b', addBinary(new Uint8Array(v)), v.byteLength]), null);
    if (v instanceof Date) return (patches.push([path.slice(), 'd', v.getTime()]), null);
    if (v instanceof Map || v instanceof Set) throw new Error('codec: cannot store a Map or Set');
    if (Array.isArray(v)) {
      let out: unknown[] | null = null;
      for (let i = 0; i < v.length; i++) {
        const item = v[i];
        if (typeof item === 'string' || typeof item === 'boolean' || item === null || (typeof item === 'number' && Number.isFinite(item))) {
          if (out) out[i] = item;
          continue;
        }
        path.push(i);
        const safe = walk(item, path);
        path.pop();
        if (safe !== item && !out) out = v.slice(0, i);
        if (out) out[i] = safe;
      }
      return out ?? v;
    }
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return v;
    let out: Record<string, unknown> | null = null;
    const record = v as Record<string, unknown>;
    const keys = Object.keys(record);
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k]!;
      const item = record[key];
      path.push(key);
      const safe = walk(item, path);
      path.pop();
      if (safe !== item && !out) {
        out = {};
        for (let j = 0; j < k; j++) out[keys[j]!] = record[keys[j]!];
      }
      if (out) out[key] = safe;
    }
    return out ?? v;
  };
  const skeleton = walk(value, []);
  const text = encoder.encode(JSON.stringify([skeleton, patches]));
  const head = align8(4 + text.byteLength);
  const out = new Uint8Array(head + binaryBytes);
  new DataView(out.buffer).setUint32(0, text.byteLength, true);
  out.set(text, 4);
  let offset = head;
  for (const bytes of binaries) {
    out.set(bytes, offset);
    offset = align8(offset + bytes.byteLength);
  }
  return out;
}

/**
 * The value `encodeValue` wrote into `bytes` (typed arrays come back as copies with their own buffer).
 * @throws Error when `bytes` is not such a layout.
 */
export function decodeValue(bytes: Uint8Array): unknown {
  if (bytes.byteLength < 4) throw new Error('codec: too short');
  const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  if (4 + length > bytes.byteLength) throw new Error('codec: cut off');
  const [skeleton, patches] = JSON.parse(decoder.decode(bytes.subarray(4, 4 + length))) as [unknown, Patch[]];
  if (patches.length === 0) return skeleton;
  const base = bytes.byteOffset + align8(4 + length);
  const copy = (offset: number, byteLength: number) => bytes.buffer.slice(base + offset, base + offset + byteLength) as ArrayBuffer;
  let root = skeleton;
  for (const [path, tag, a, b, c] of patches) {
    let restored: unknown;
    switch (tag) {
      case 'u':
        restored = undefined;
        break;
      case 'n':
        restored = Number(a);
        break;
      case 'd':
        restored = new Date(a as number);
        break;
      case 'b':
        restored = copy(a as number, b as number);
        break;
      case 't': {
        const Ctor = TYPED_ARRAYS[a as TypedArrayName];
        if (!Ctor) throw new Error(`codec: unknown typed array ${String(a)}`);
        restored = new Ctor(copy(b as number, c as number));
        break;
      }
      default:
        throw new Error(`codec: unknown tag ${String(tag)}`);
    }
    if (path.length === 0) {
      root = restored;
      continue;
    }
    let holder = root as Record<string | number, unknown>;
    for (let i = 0; i < path.length - 1; i++) holder = holder[path[i]!] as Record<string | number, unknown>;
    holder[path[path.length - 1]!] = restored;
  }
  return root;
}
