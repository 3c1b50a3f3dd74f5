/**
 * A streaming `.tar.gz` of a mounted directory: POSIX pax tar as GNU tar `--format=posix` writes it
 * (tar-header.ts), gzip from zlib. Kept: modes (setuid/setgid/sticky too), numeric uid/gid of any size,
 * mtimes of any year (whole seconds), symlinks, hard links (one copy, then link entries), sparse files
 * (pax sparse 1.0: holes are not stored and GNU tar punches them back), names of any length. Not kept:
 * xattrs/ACLs (Node has no API for them), atime/ctime, sub-second mtimes, sockets/FIFOs/devices
 * (skipped with a warning). docs/volume-archive.md has the format and the measurements.
 *
 * Entries go in sorted order, one read buffer at a time: the archive is an async generator that the
 * gzip stream pulls, so memory is bounded whatever the volume's size. A live volume changes while it
 * is read, so a file that vanishes is a warning (the archive still holds everything that exists), and
 * a file that changes while read is a warning that marks the archive incomplete (its bytes in the
 * archive may be torn). A file the Pod cannot read fails the run: the archive would silently lack data.
 */
import { createHash, type Hash } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, open, opendir, readlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { Logger } from '../runtime/logger.ts';
import { encodeSparseMap, findDataSegments, mayBeSparse, type Segment } from './sparse-map.ts';
import { encodeHeader, END_OF_ARCHIVE, metadataLine, padding, type EntryMetadata, type TarEntry } from './tar-header.ts';

/** How many unreadable paths a failed run lists. */
export const UNREADABLE_LIMIT = 10;
const READ_CHUNK = 256 * 1024;

/** Outcome of {@link archiveDirectory} (the archive bytes went to the sink). */
export interface ArchiveResult {
  /** Regular files stored with their content (hard links to them not counted). */
  readonly files: number;
  readonly directories: number;
  readonly symlinks: number;
  /** Link entries: further names of a file already in the archive. */
  readonly hardLinks: number;
  /** Files stored as sparse (holes not stored). */
  readonly sparseFiles: number;
  /** File content bytes archived (before compression; a sparse file's data only). */
  readonly bytes: number;
  /** SHA-256 of every entry's {@link metadataLine}, in order: `verifyArchive` recomputes it from the headers. */
  readonly metadataSha256: string;
  /** Paths (relative) that vanished between listing and reading: not in the archive, not lost. */
  readonly vanished: readonly string[];
  /** Paths whose size or mtime changed while read: in the archive, maybe torn. */
  readonly changed: readonly string[];
  /** Sockets, FIFOs, devices: not archivable, skipped. */
  readonly skipped: readonly string[];
  /** The first paths the process may not read (EACCES/EPERM); non-empty means the archive is unusable. */
  readonly unreadable: readonly string[];
}

/** Options of {@link archiveDirectory}. */
export interface ArchiveOptions {
  /** The directory to archive (its contents, not itself, are the archive's top level). */
  readonly sourceDir: string;
  readonly logger: Logger;
  /** Called with every file content byte count read. */
  readonly onBytes?: (n: number) => void;
  /**
   * What the stream carries: `gzip` (a `.tar.gz`, the unencrypted directory destination) or `tar`, the
   * plain archive for a pipeline that compresses (zstd, gzip) and encrypts it itself: no gzip work
   * done only to be undone. @default 'gzip'
   */
  readonly output?: 'gzip' | 'tar';
  /** gzip level 1–9 (`output: 'gzip'` only). @default 6 (zlib's default) */
  readonly gzipLevel?: number;
}

interface Walk {
  files: number;
  directories: number;
  symlinks: number;
  hardLinks: number;
  sparseFiles: number;
  bytes: number;
  vanished: string[];
  changed: string[];
  skipped: string[];
  unreadable: string[];
  /** `dev:ino` → the name it was first archived under, for files with more than one link. */
  readonly linked: Map<string, string>;
  readonly metadata: Hash;
  readonly options: ArchiveOptions;
}

const isDenied = (err: unknown): boolean => ['EACCES', 'EPERM'].includes((err as NodeJS.ErrnoException).code ?? '');
const isGone = (err: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');
/** O_NOFOLLOW: a file replaced by a symlink since lstat is not followed out of the volume; O_NONBLOCK: nor is a FIFO waited on. */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Whole seconds of an mtime (floor, so 1969-12-31T23:59:59.5 is -1 like GNU tar's). */
const seconds = (st: Stats): number => Math.floor(st.mtimeMs / 1000);

/** The header of `entry`, after adding what it restores to the metadata digest. */
function entryHeader(walk: Walk, entry: TarEntry, restored: Partial<EntryMetadata> = {}): Buffer {
  walk.metadata.update(metadataLine({ name: entry.name, type: entry.type, mode: entry.mode, uid: entry.uid, gid: entry.gid, mtime: entry.mtime, size: entry.size, linkname: entry.linkname, segments: [], ...restored }));
  return encodeHeader(entry);
}

/** `length` bytes of `handle` from `offset`, in fresh buffers; zeros for what vanished (the file shrank). */
async function* readRange(handle: FileHandle, offset: number, length: number, walk: Walk): AsyncGenerator<Buffer, boolean> {
  let torn = false;
  for (let done = 0; done < length; ) {
    const want = Math.min(READ_CHUNK, length - done);
    // A fresh buffer each time: the one yielded may still sit in the stream's queue.
    const buf = Buffer.allocUnsafe(want);
    const { bytesRead } = await handle.read(buf, 0, want, offset + done);
    if (bytesRead === 0) {
      // Shrank while read: pad with zeros so the entry keeps its declared size and the tar stays valid.
      torn = true;
      yield buf.fill(0);
      done += want;
      continue;
    }
    yield bytesRead === want ? buf : buf.subarray(0, bytesRead);
    done += bytesRead;
    walk.options.onBytes?.(bytesRead);
  }
  return torn;
}

async function* addFile(full: string, rel: string, walk: Walk): AsyncGenerator<Buffer> {
  let handle;
  try {
    handle = await open(full, OPEN_FLAGS);
  } catch (err) {
    if (isGone(err) || (err as NodeJS.ErrnoException).code === 'ELOOP') return void walk.vanished.push(rel);
    throw err;
  }
  try {
    const before = await handle.stat();
    if (!before.isFile()) {
      // Replaced by a FIFO or device since lstat.
      walk.skipped.push(rel);
      return;
    }
    const { size } = before;
    const owner = { mode: before.mode, uid: before.uid, gid: before.gid, mtime: seconds(before) };
    const key = `${before.dev}:${before.ino}`;
    const first = before.nlink > 1 ? walk.linked.get(key) : undefined;
    if (first !== undefined) {
      // GNU tar's way: the content once, every further name a link entry to the first.
      yield entryHeader(walk, { name: rel, type: 'link', linkname: first, size: 0, ...owner });
      walk.hardLinks++;
      return;
    }
    const segments: Segment[] = mayBeSparse(before) ? await findDataSegments(handle, size) : [{ offset: 0, length: size }];
    const dataBytes = segments.reduce((sum, s) => sum + s.length, 0);
    let torn = false;
    if (dataBytes < size) {
      const map = encodeSparseMap(segments, size);
      const slash = rel.lastIndexOf('/');
      // GNU tar names the entry `<dir>/GNUSparseFile.<pid>/<base>`; tars without pax sparse support extract the map and data under that name.
      const stored = `${rel.slice(0, slash + 1)}GNUSparseFile.0/${rel.slice(slash + 1)}`;
      yield entryHeader(walk, { name: stored, type: 'file', size: map.length + dataBytes, ...owner, pax: { 'GNU.sparse.major': '1', 'GNU.sparse.minor': '0', 'GNU.sparse.name': rel, 'GNU.sparse.realsize': String(size) } }, { name: rel, size, segments });
      yield map;
      walk.sparseFiles++;
    } else {
      yield entryHeader(walk, { name: rel, type: 'file', size, ...owner });
    }
    for (const segment of segments) {
      if (segment.length > 0) torn = (yield* readRange(handle, segment.offset, segment.length, walk)) || torn;
    }
    yield padding(dataBytes);
    const after = await handle.stat();
    if (torn || after.size !== before.size || after.mtimeMs !== before.mtimeMs) {
      walk.changed.push(rel);
      walk.options.logger.warn({ path: rel, sizeBefore: before.size, sizeAfter: after.size }, 'file changed while being archived: its copy may be torn');
    }
    if (before.nlink > 1) walk.linked.set(key, rel);
    walk.files++;
    walk.bytes += dataBytes;
  } finally {
    await handle.close();
  }
}

async function* addTree(dir: string, prefix: string, walk: Walk): AsyncGenerator<Buffer> {
  let names: string[];
  try {
    const handle = await opendir(dir);
    names = [];
    for await (const dirent of handle) names.push(dirent.name);
  } catch (err) {
    if (isGone(err)) return void walk.vanished.push(prefix || '.');
    if (isDenied(err)) return void walk.unreadable.push(prefix || '.');
    throw err;
  }
  names.sort();
  const { logger } = walk.options;
  for (const name of names) {
    if (walk.unreadable.length >= UNREADABLE_LIMIT) return;
    const full = join(dir, name);
    const rel = prefix ? `${prefix}/${name}` : name;
    // Once a path is unreadable the archive is lost anyway: only look for more such paths.
    const scanOnly = walk.unreadable.length > 0;
    let st: Stats;
    try {
      st = await lstat(full);
    } catch (err) {
      if (isGone(err)) {
        walk.vanished.push(rel);
        logger.warn({ path: rel }, 'file vanished before it was archived');
        continue;
      }
      throw err;
    }
    const owner = { mode: st.mode, uid: st.uid, gid: st.gid, mtime: seconds(st) };
    try {
      if (st.isDirectory()) {
        if (!scanOnly) {
          yield entryHeader(walk, { name: `${rel}/`, type: 'directory', size: 0, ...owner });
          walk.directories++;
        }
        yield* addTree(full, rel, walk);
      } else if (st.isSymbolicLink()) {
        const target = await readlink(full);
        if (!scanOnly) yield entryHeader(walk, { name: rel, type: 'symlink', linkname: target, size: 0, ...owner });
        walk.symlinks++;
      } else if (st.isFile()) {
        if (scanOnly) await (await open(full, OPEN_FLAGS)).close();
        else yield* addFile(full, rel, walk);
      } else {
        walk.skipped.push(rel);
        logger.warn({ path: rel }, 'not a regular file, directory or symlink (socket, FIFO or device): skipped');
      }
    } catch (err) {
      if (isDenied(err)) walk.unreadable.push(rel);
      else if (isGone(err)) walk.vanished.push(rel);
      else throw err;
    }
  }
}

/**
 * Archives `sourceDir` into tar bytes, gzip-compressed unless `output: 'tar'`, returned as a stream,
 * and a promise of the result that settles once the walk is done (reject: an I/O error other than a
 * vanished, changed or unreadable file, or the consumer stopped reading).
 */
export function archiveDirectory(options: ArchiveOptions): { readonly stream: AsyncIterable<Buffer>; readonly result: Promise<ArchiveResult> } {
  const walk: Walk = { files: 0, directories: 0, symlinks: 0, hardLinks: 0, sparseFiles: 0, bytes: 0, vanished: [], changed: [], skipped: [], unreadable: [], linked: new Map(), metadata: createHash('sha256'), options };
  let settle!: { resolve: (r: ArchiveResult) => void; reject: (e: unknown) => void };
  const result = new Promise<ArchiveResult>((resolve, reject) => (settle = { resolve, reject }));
  // The result is awaited after the stream is drained; keep an early rejection from being "unhandled".
  result.catch(() => undefined);
  async function* tar(): AsyncGenerator<Buffer> {
    let finished = false;
    try {
      yield* addTree(options.sourceDir, '', walk);
      yield END_OF_ARCHIVE;
      finished = true;
      const { linked: _linked, metadata, options: _options, ...counts } = walk;
      settle.resolve({ ...counts, metadataSha256: metadata.digest('hex') });
    } catch (err) {
      settle.reject(err);
      throw err;
    } finally {
      // Returned early: the consumer gave up (disk full, SIGTERM) and destroyed the stream.
      if (!finished) settle.reject(new Error('archive stream closed'));
    }
  }
  const source = Readable.from(tar(), { objectMode: false });
  if (options.output === 'tar') return { stream: source, result };
  const gzip = createGzip({ level: options.gzipLevel ?? 6 });
  source.pipe(gzip);
  source.on('error', (err: Error) => gzip.destroy(err));
  // The consumer gave up: tear the tar side down so the walk ends at once (its finally closes the file).
  gzip.on('close', () => source.destroy());
  return { stream: gzip, result };
}
