/**
 * The plaintext of a sealed row: any structured-clone-like value (objects, arrays, strings,
 * numbers, booleans, `null`, typed arrays, `ArrayBuffer`, `Date`, `undefined` properties, NaN and
 * ±Infinity) as bytes, synchronously (it runs inside IndexedDB transactions, see `middleware.ts`).
 *
 * Layout: `u32 LE` length of the JSON part, the JSON (UTF-8), zero padding to a multiple of 8, then
 * the bytes of every typed array / `ArrayBuffer`, each at an offset that is a multiple of 8. In the
 * JSON a non-JSON value is `{"\u0000": [tag, …]}` (`t` typed array: constructor name, offset, byte
 * length; `b` ArrayBuffer: offset, byte length; `d` Date: ms epoch; `u` undefined; `n` NaN/±Infinity).
 * Maps and Sets are not stored by the app and are refused (a programmer error, thrown as `Error`).
 */

const TAG = '\u0000';

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

/**
 * `value` as bytes (see module doc).
 * @throws Error for a Map, Set or another value the layout cannot hold.
 */
export function encodeValue(value: unknown): Uint8Array {
  const binaries: Uint8Array[] = [];
  let binaryBytes = 0;
  const addBinary = (bytes: Uint8Array): number => {
    const offset = binaryBytes;
    binaries.push(bytes);
    binaryBytes = align8(binaryBytes + bytes.byteLength);
    return offset;
  };
  const json = JSON.stringify(value, function (this: Record<string, unknown>, key: string, replaced: unknown) {
    const original = key === '' && !(key in this) ? replaced : this[key];
    if (original === undefined) return { [TAG]: ['u'] };
    if (typeof original === 'number') return Number.isFinite(original) ? original : { [TAG]: ['n', String(original)] };
    if (typeof original !== 'object' || original === null) return replaced;
    if (ArrayBuffer.isView(original)) {
      const name = original.constructor.name as TypedArrayName;
      if (!(name in TYPED_ARRAYS)) throw new Error(`codec: cannot store a ${name}`);
      const bytes = new Uint8Array(original.buffer, original.byteOffset, original.byteLength);
      return { [TAG]: ['t', name, addBinary(bytes), bytes.byteLength] };
    }
    if (original instanceof ArrayBuffer) return { [TAG]: ['b', addBinary(new Uint8Array(original)), original.byteLength] };
    if (original instanceof Date) return { [TAG]: ['d', original.getTime()] };
    if (original instanceof Map || original instanceof Set) throw new Error('codec: cannot store a Map or Set');
    return replaced;
  });
  const text = encoder.encode(json ?? 'null');
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
  const text = decoder.decode(bytes.subarray(4, 4 + length));
  const base = bytes.byteOffset + align8(4 + length);
  if (!text.includes('"\\u0000"')) return JSON.parse(text);
  const copy = (offset: number, byteLength: number) => bytes.buffer.slice(base + offset, base + offset + byteLength) as ArrayBuffer;
  const UNDEFINED = Symbol('undefined');
  const revived = JSON.parse(text, (_key, value: unknown) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, TAG)) return value;
    const [tag, a, b, c] = (value as Record<string, unknown[]>)[TAG]!;
    switch (tag) {
      case 'u':
        return UNDEFINED;
      case 'n':
        return Number(a);
      case 'd':
        return new Date(a as number);
      case 'b':
        return copy(a as number, b as number);
      case 't': {
        const Ctor = TYPED_ARRAYS[a as TypedArrayName];
        if (!Ctor) throw new Error(`codec: unknown typed array ${String(a)}`);
        return new Ctor(copy(b as number, c as number));
      }
      default:
        throw new Error(`codec: unknown tag ${String(tag)}`);
    }
  });
  return restoreUndefined(revived, UNDEFINED);
}

/** Replaces the `undefined` placeholders (a reviver that returns `undefined` would drop the key). */
function restoreUndefined(value: unknown, marker: symbol): unknown {
  if (value === marker) return undefined;
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value) || value instanceof ArrayBuffer || value instanceof Date) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = restoreUndefined(value[i], marker);
    return value;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) record[key] = restoreUndefined(record[key], marker);
  return value;
}
