/**
 * Every string a stored value holds — string values and object keys, depth first — for tests that
 * check that no trace of a text is left in storage. Numbers, typed arrays, `ArrayBuffer`s and other
 * binary data are skipped (a number or a vector's bytes can spell "4711" by chance).
 */

/** The strings of `value` (see module doc), appended to `into` (a new list by default). @returns `into`. */
export function stringsOf(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) value.forEach((v) => stringsOf(v, into));
  else if (value && typeof value === 'object' && !ArrayBuffer.isView(value) && !(value instanceof ArrayBuffer) && !(value instanceof Blob)) {
    for (const [k, v] of Object.entries(value)) {
      into.push(k);
      stringsOf(v, into);
    }
  }
  return into;
}
