/**
 * One image layer: a tar of file system entries written the same way every time, then gzip-compressed.
 *
 * Reproducible by construction: entries sorted by path, every mtime the one given (the commit's time),
 * owners and modes as the entries state them (never the build machine's), no user or group names, pax
 * headers only where ustar cannot hold a value (src/backup/tar-header.ts, the runner's own encoder).
 * Compression runs Debian's GNU gzip (`gzip -n`: no name, no time stamp), whose output depends only on
 * its input and level. Node's zlib is Chromium's, which picks its hash function by CPU feature
 * (SSE4.2, ARMv8 CRC), so the same tar could compress to other bytes, and another digest, elsewhere.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { END_OF_ARCHIVE, encodeHeader, padding, type TarType } from '../../src/backup/tar-header.ts';

/** The bytes of a file entry: in memory, or a file read when the layer is written. */
export type EntryData = { readonly bytes: Buffer } | { readonly file: string; readonly size: number };

/** One entry of a layer. */
export interface LayerEntry {
  /** Path in the image, relative to `/`, no trailing slash (`usr/lib/os-release`). */
  readonly path: string;
  /** No hard links: a layer holds each file's bytes once under each name it has. */
  readonly type: Exclude<TarType, 'link'>;
  /** Permission bits with setuid/setgid/sticky. */
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  /** A symlink's target. */
  readonly linkname?: string;
  /** A file's bytes. */
  readonly data?: EntryData;
}

/** A layer written as a blob. */
export interface WrittenLayer {
  /** Digest of the compressed blob (the manifest's layer digest). */
  readonly digest: string;
  /** Size of the compressed blob in bytes. */
  readonly size: number;
  /** Digest of the uncompressed tar (the config's `rootfs.diff_ids`). */
  readonly diffId: string;
  /** Size of the uncompressed tar in bytes. */
  readonly uncompressedSize: number;
}

/** gzip's level: its default. -9 saved 0.6 % of the Node binary's layer for three times the time. */
const GZIP_LEVEL = 6;

const sizeOf = (data: EntryData | undefined): number => (data === undefined ? 0 : 'bytes' in data ? data.bytes.length : data.size);

/** Entries in the order the tar lists them: by path, byte-wise (a directory before what it holds). */
export function sortEntries(entries: readonly LayerEntry[]): LayerEntry[] {
  return [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
}

/** The tar's bytes, entry by entry (file contents streamed from disk when they live there). */
export async function* tarStream(entries: readonly LayerEntry[], mtime: number): AsyncGenerator<Buffer> {
  for (const entry of sortEntries(entries)) {
    const size = entry.type === 'file' ? sizeOf(entry.data) : 0;
    const name = entry.type === 'directory' ? `${entry.path}/` : entry.path;
    yield encodeHeader({ name, type: entry.type, mode: entry.mode, uid: entry.uid, gid: entry.gid, mtime, size, ...(entry.linkname === undefined ? {} : { linkname: entry.linkname }) });
    if (size === 0 || entry.data === undefined) continue;
    if ('bytes' in entry.data) yield entry.data.bytes;
    else {
      let read = 0;
      for await (const chunk of createReadStream(entry.data.file)) {
        read += (chunk as Buffer).length;
        yield chunk as Buffer;
      }
      // The header promised `size` bytes: a file that changed since it was measured would corrupt the tar.
      if (read !== size) throw new Error(`${entry.data.file} changed while the layer was written (${read} bytes, ${size} expected)`);
    }
    yield padding(size);
  }
  yield END_OF_ARCHIVE;
}

/** A pass-through stage that hashes and counts the bytes going by. */
function counting(hash: ReturnType<typeof createHash>, counter: { bytes: number }): (source: AsyncIterable<Buffer>) => AsyncGenerator<Buffer> {
  return async function* (source) {
    for await (const chunk of source) {
      hash.update(chunk);
      counter.bytes += chunk.length;
      yield chunk;
    }
  };
}

/**
 * Writes the layer of `entries` gzip-compressed to `blobFile`; resolves with its digests and sizes.
 * `mtime` (seconds) is every entry's modification time.
 */
export async function writeLayer(entries: readonly LayerEntry[], mtime: number, blobFile: string): Promise<WrittenLayer> {
  const gzip = spawn('gzip', ['-n', `-${GZIP_LEVEL}`, '-c'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  gzip.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve, reject) => {
    gzip.once('error', (err) => reject(new Error(`cannot run gzip (Debian's gzip package): ${err.message}`, { cause: err })));
    gzip.once('close', resolve);
  });
  const tarHash = createHash('sha256');
  const blobHash = createHash('sha256');
  const tarBytes = { bytes: 0 };
  const blobBytes = { bytes: 0 };
  const feed = pipeline(Readable.from(tarStream(entries, mtime)), counting(tarHash, tarBytes), gzip.stdin as Writable);
  const drain = pipeline(gzip.stdout, counting(blobHash, blobBytes), createWriteStream(blobFile));
  // Settled together: a failed feed (a file that changed) must not leave gzip or the drain unobserved.
  const results = await Promise.allSettled([feed.catch((err: unknown) => (gzip.kill(), Promise.reject(err))), drain, exited]);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  const code = (results[2] as PromiseFulfilledResult<number | null>).value;
  if (code !== 0) throw new Error(`gzip exited with ${code}: ${stderr.trim()}`);
  return { digest: `sha256:${blobHash.digest('hex')}`, size: blobBytes.bytes, diffId: `sha256:${tarHash.digest('hex')}`, uncompressedSize: tarBytes.bytes };
}
