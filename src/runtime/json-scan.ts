/**
 * Structural scanning of JSON text in a Buffer, without parsing it: where a value ends, how many
 * objects, arrays and object members it holds and how deeply they nest, and where the array at a path of object keys
 * lies. With it a large document can be parsed one array element at a time, so the heap it takes
 * follows the size of one element, not the whole document (V8 spends 60 bytes or more on every parsed
 * object, and more on every key it has not seen before, so a body of tiny objects takes up to 20 times
 * its size in heap when parsed whole).
 *
 * The scanner judges nothing but boundaries: what it returns is handed to `JSON.parse`, which rejects
 * what is not JSON. Only the bytes `"`, `\`, `{`, `}`, `[`, `]`, `,`, `:` and whitespace matter, all
 * ASCII, which never occur inside a multi-byte UTF-8 sequence: scanning bytes is exact.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** 1 for the bytes a container's scan acts on, 0 for the rest (skipped with one lookup). */
const STRUCTURAL = new Uint8Array(256);
for (const b of [QUOTE, OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY, COLON]) STRUCTURAL[b] = 1;

/** Index of the first byte at or after `i` that is not JSON whitespace. */
function skipWhitespace(buf: Buffer, i: number, end = buf.length): number {
  while (i < end) {
    const b = buf[i];
    if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return i;
    i++;
  }
  return i;
}

/** Index after the string whose opening quote is at `i`, or -1 when it does not end before `end`. */
function stringEnd(buf: Buffer, i: number, end: number): number {
  // Most strings are short (keys, names): a loop here beats a native call per string. Past 64 bytes
  // Buffer.indexOf jumps to each quote, and the backslashes before it say whether it is escaped.
  let from = i + 1;
  const inline = Math.min(end, from + 64);
  while (from < inline) {
    const b = buf[from];
    if (b === QUOTE) return from + 1;
    from += b === BACKSLASH ? 2 : 1;
  }
  for (;;) {
    const quote = buf.indexOf(QUOTE, from);
    if (quote < 0 || quote >= end) return -1;
    let backslashes = 0;
    while (buf[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** Bounds a value must keep; the first one passed stops the scan. */
export interface ValueLimits {
  /** Bytes of the value. */
  readonly maxBytes: number;
  /** Objects, arrays and object members in the value, itself included: what parsing allocates beyond the bytes. */
  readonly maxNodes: number;
  /** Nesting of objects and arrays (a scalar is 0 deep, `[]` 1). */
  readonly maxDepth: number;
}

/** What {@link scanValue} found: where the value ends, or which bound it passed, or that it is not JSON. */
export type ValueExtent =
  | { readonly kind: 'value'; readonly start: number; readonly end: number; readonly nodes: number; readonly depth: number }
  | { readonly kind: 'too-large' | 'too-many-nodes' | 'too-deep'; readonly start: number }
  | { readonly kind: 'malformed'; readonly at: number };

const UNLIMITED: ValueLimits = { maxBytes: Infinity, maxNodes: Infinity, maxDepth: Infinity };

/**
 * The extent of the JSON value starting at `start` (no whitespace before it), with its nodes (objects,
 * arrays, members: a member is counted at its colon) and depth. Containers must close in
 * order (`[}` is malformed); scalars end at the next delimiter, and their spelling is left to `JSON.parse`.
 */
export function scanValue(buf: Buffer, start: number, limits: ValueLimits = UNLIMITED, end = buf.length): ValueExtent {
  const first = buf[start];
  if (first === undefined || start >= end) return { kind: 'malformed', at: start };
  if (first === QUOTE) {
    const after = stringEnd(buf, start, end);
    if (after < 0) return { kind: 'malformed', at: start };
    return after - start > limits.maxBytes ? { kind: 'too-large', start } : { kind: 'value', start, end: after, nodes: 0, depth: 0 };
  }
  if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) {
    let i = start;
    while (i < end) {
      const b = buf[i];
      if (b === COMMA || b === CLOSE_ARRAY || b === CLOSE_OBJECT || b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) break;
      i++;
    }
    if (i === start) return { kind: 'malformed', at: start };
    return i - start > limits.maxBytes ? { kind: 'too-large', start } : { kind: 'value', start, end: i, nodes: 0, depth: 0 };
  }
  // Open containers, innermost last: which closing byte each expects. Grown as needed (depth is bounded by the limit or the input).
  let open = new Uint8Array(64);
  let depth = 0;
  let deepest = 0;
  let nodes = 0;
  const stop = Math.min(end, limits.maxBytes === Infinity ? end : start + limits.maxBytes);
  let i = start;
  while (i < stop) {
    const b = buf[i]!;
    if (STRUCTURAL[b] === 0) {
      i++;
      continue;
    }
    if (b === QUOTE) {
      const after = stringEnd(buf, i, end);
      if (after < 0) return { kind: 'malformed', at: i };
      i = after;
      continue;
    }
    if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      if (++nodes > limits.maxNodes) return { kind: 'too-many-nodes', start };
      if (depth === limits.maxDepth) return { kind: 'too-deep', start };
      if (depth === open.length) {
        const grown = new Uint8Array(open.length * 2);
        grown.set(open);
        open = grown;
      }
      open[depth++] = b === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
      if (depth > deepest) deepest = depth;
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
      if (depth === 0 || open[depth - 1] !== b) return { kind: 'malformed', at: i };
      if (--depth === 0) return { kind: 'value', start, end: i + 1, nodes, depth: deepest };
    } else if (b === COLON && ++nodes > limits.maxNodes) {
      return { kind: 'too-many-nodes', start };
    }
    i++;
  }
  return stop < end ? { kind: 'too-large', start } : { kind: 'malformed', at: end };
}

/** The byte range `[start, end)` of a value (an array: from `[` to after `]`). */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/** Whether the JSON string `buf[start, end)` (quotes included) means `expected` (escapes decoded, as JSON.parse reads it). */
function keyIs(buf: Buffer, start: number, end: number, expected: string): boolean {
  // An escape spells one character in at most 6 bytes; a longer key cannot be `expected`.
  if (end - start > 2 + 6 * expected.length) return false;
  try {
    return JSON.parse(buf.toString('utf8', start, end)) === expected;
  } catch {
    return false;
  }
}

/**
 * Where the array at `path` (object keys from the top) lies in the JSON document `buf`, as `JSON.parse`
 * would read it: when a key repeats, the last one counts. Undefined when the document does not have an
 * array there (it may still be valid JSON; or not JSON at all, which the caller's parse will say).
 */
export function locateArray(buf: Buffer, path: readonly string[]): ByteRange | undefined {
  return arrayAt(buf, skipWhitespace(buf, 0), path)?.range;
}

function skipped(buf: Buffer, i: number): { range: undefined; end: number } | undefined {
  const value = scanValue(buf, i);
  return value.kind === 'value' ? { range: undefined, end: value.end } : undefined;
}

/** The array at `path` in the value at `i` (as JSON.parse reads it: of a repeated key, the last), and where that value ends. */
function arrayAt(buf: Buffer, i: number, path: readonly string[]): { range: ByteRange | undefined; end: number } | undefined {
  if (path.length === 0) {
    const value = scanValue(buf, i);
    if (value.kind !== 'value') return undefined;
    return { range: buf[i] === OPEN_ARRAY ? { start: i, end: value.end } : undefined, end: value.end };
  }
  if (buf[i] !== OPEN_OBJECT) return skipped(buf, i);
  let range: ByteRange | undefined;
  let j = skipWhitespace(buf, i + 1);
  if (buf[j] === CLOSE_OBJECT) return { range, end: j + 1 };
  for (;;) {
    if (buf[j] !== QUOTE) return undefined;
    const keyEnd = stringEnd(buf, j, buf.length);
    if (keyEnd < 0) return undefined;
    const colon = skipWhitespace(buf, keyEnd);
    if (buf[colon] !== COLON) return undefined;
    const memberStart = skipWhitespace(buf, colon + 1);
    const matches = keyIs(buf, j, keyEnd, path[0]!);
    const member = matches ? arrayAt(buf, memberStart, path.slice(1)) : skipped(buf, memberStart);
    if (!member) return undefined;
    if (matches) range = member.range;
    j = skipWhitespace(buf, member.end);
    if (buf[j] === CLOSE_OBJECT) return { range, end: j + 1 };
    if (buf[j] !== COMMA) return undefined;
    j = skipWhitespace(buf, j + 1);
  }
}

/**
 * The elements of the array `range` of `buf`, one at a time: {@link ArrayElements.next} scans the next
 * one within `limits`, or says the array ended (undefined) or that what separates elements is not JSON.
 */
export class ArrayElements {
  #at: number;
  #first = true;
  #done = false;
  readonly #buf: Buffer;
  readonly #end: number;

  constructor(buf: Buffer, range: ByteRange) {
    this.#buf = buf;
    this.#at = range.start + 1;
    this.#end = range.end - 1; // the closing bracket
  }

  /** The next element's extent; undefined after the last. */
  next(limits: ValueLimits): ValueExtent | undefined {
    if (this.#done) return undefined;
    const buf = this.#buf;
    let i = skipWhitespace(buf, this.#at, this.#end);
    if (i === this.#end) {
      this.#done = true;
      return undefined;
    }
    if (!this.#first) {
      if (buf[i] !== COMMA) return { kind: 'malformed', at: i };
      i = skipWhitespace(buf, i + 1, this.#end);
      if (i === this.#end) return { kind: 'malformed', at: i };
    }
    this.#first = false;
    const extent = scanValue(buf, i, limits, this.#end);
    if (extent.kind === 'value') this.#at = extent.end;
    return extent;
  }
}
