/**
 * Sparse files in the archive as GNU tar's pax format 1.0 (`GNU.sparse.major=1`, `minor=0`): the data
 * segments of the file (offset, length) are found first, then the entry's data is the map (decimal
 * lines, padded to a block) followed by the segments' bytes only. GNU tar extracts it with the holes
 * punched back (no flag needed), so a 2 GB file holding 4 KB stays 4 KB on disk after a restore.
 *
 * How holes are found: Node exposes no lseek(SEEK_DATA/SEEK_HOLE), so the file is read once and every
 * all-zero 4 KiB block counts as a hole, what GNU tar's `--sparse` does without SEEK_HOLE. Only files
 * with fewer allocated blocks than their size are scanned (st_blocks × 512 < st_size): a dense file
 * full of zeros is stored as it is, byte for byte, and costs no second read. Holes in the file cost a
 * read of zeros from the page cache (no disk I/O), so the scan runs at memory speed.
 */
import type { FileHandle } from 'node:fs/promises';
import { BLOCK } from './tar-header.ts';

/** Granularity of hole detection: the page and usual file system block. */
export const HOLE_GRANULE = 4096;
/**
 * Most data segments one file's map holds (~40 bytes each in memory and in the archive): past it the
 * rest of the file is one data segment, stored with its zeros; memory stays bounded for any file.
 */
export const MAX_SEGMENTS = 65_536;
const SCAN_CHUNK = 1 << 20;
/** One chunk of zeros: a chunk that is all hole is skipped with one memcmp instead of 256. */
const ZERO_CHUNK = Buffer.alloc(SCAN_CHUNK);
const ZERO_GRANULE = ZERO_CHUNK.subarray(0, HOLE_GRANULE);

/** One data segment: bytes [offset, offset + length) of the file. */
export interface Segment {
  readonly offset: number;
  readonly length: number;
}

/** Whether a file with this stat is worth scanning for holes (fewer blocks allocated than its size). */
export function mayBeSparse(st: { readonly size: number; readonly blocks: number }): boolean {
  return st.size > HOLE_GRANULE && st.blocks * 512 < st.size;
}

/**
 * The data segments of the first `size` bytes of `file`: runs of granules that are not all zeros,
 * merged when adjacent. A file with no data at all yields no segment.
 */
export async function findDataSegments(file: FileHandle, size: number): Promise<Segment[]> {
  const segments: { offset: number; length: number }[] = [];
  const buf = Buffer.allocUnsafe(SCAN_CHUNK);
  let position = 0;
  while (position < size) {
    const { bytesRead } = await file.read(buf, 0, Math.min(SCAN_CHUNK, size - position), position);
    // Shrank while scanned: the rest is not data; the caller's before/after stat marks the file changed.
    if (bytesRead === 0) break;
    if (buf.subarray(0, bytesRead).equals(ZERO_CHUNK.subarray(0, bytesRead))) {
      position += bytesRead;
      continue;
    }
    for (let at = 0; at < bytesRead; at += HOLE_GRANULE) {
      const end = Math.min(at + HOLE_GRANULE, bytesRead);
      const granule = buf.subarray(at, end);
      if (granule.equals(end - at === HOLE_GRANULE ? ZERO_GRANULE : ZERO_GRANULE.subarray(0, end - at))) continue;
      const offset = position + at;
      const last = segments.at(-1);
      if (last && (last.offset + last.length === offset || segments.length >= MAX_SEGMENTS)) last.length = offset + (end - at) - last.offset;
      else segments.push({ offset, length: end - at });
    }
    position += bytesRead;
  }
  return segments;
}

/**
 * The map block of pax sparse 1.0: the segment count, then offset and length of each, one decimal
 * number a line, zero-padded to whole blocks. Like GNU tar, a last zero-length segment at the real
 * size records a trailing hole for readers that ignore `GNU.sparse.realsize`.
 */
export function encodeSparseMap(segments: readonly Segment[], realSize: number): Buffer {
  const all = [...segments];
  const last = all.at(-1);
  if (!last || last.offset + last.length < realSize) all.push({ offset: realSize, length: 0 });
  const text = [String(all.length), ...all.flatMap((s) => [String(s.offset), String(s.length)])].join('\n') + '\n';
  const blocks = Math.ceil(Buffer.byteLength(text) / BLOCK);
  const map = Buffer.alloc(blocks * BLOCK);
  map.write(text, 'ascii');
  return map;
}

/**
 * Parses a pax sparse 1.0 map at the start of an entry's data: the segments and how many bytes the map
 * block takes; `undefined` when `data` ends before the map does, `null` when it is not a map.
 */
export function decodeSparseMap(data: Buffer): { segments: Segment[]; mapBytes: number } | undefined | null {
  const numbers: number[] = [];
  let at = 0;
  let count: number | undefined;
  while (count === undefined || numbers.length < 2 * count) {
    const newline = data.indexOf(0x0a, at);
    if (newline === -1) return undefined;
    const text = data.subarray(at, newline).toString('ascii');
    if (!/^[0-9]{1,20}$/.test(text)) return null;
    at = newline + 1;
    if (count === undefined) count = Number(text);
    else numbers.push(Number(text));
  }
  const segments: Segment[] = [];
  for (let i = 0; i < numbers.length; i += 2) segments.push({ offset: numbers[i]!, length: numbers[i + 1]! });
  return { segments, mapBytes: Math.ceil(at / BLOCK) * BLOCK };
}
