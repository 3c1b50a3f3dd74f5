/**
 * A streaming `.tar.gz` of a mounted directory (tar-stream + zlib): modes, mtimes, owners and symlinks
 * kept, entries in sorted order, one file's read buffer in memory at a time. A live volume changes while
 * it is read, so a file that vanishes is a warning (the archive still holds everything that exists), and
 * a file that changes while read is a warning that marks the archive incomplete (its bytes in the
 * archive may be torn). A file the Pod cannot read fails the run: the archive would silently lack data.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, open, opendir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createGzip } from 'node:zlib';
import { pack as tarPack, type Header, type Pack } from 'tar-stream';

type Headers = Partial<Header> & Pick<Header, 'name'>;
type Sink = ReturnType<Pack['entry']>;
import type { Logger } from '../runtime/logger.ts';

/** How many unreadable paths a failed run lists. */
export const UNREADABLE_LIMIT = 10;
const READ_CHUNK = 256 * 1024;

/** Outcome of {@link archiveDirectory} (the archive bytes went to the sink). */
export interface ArchiveResult {
  readonly files: number;
  readonly directories: number;
  readonly symlinks: number;
  /** File content bytes archived (before compression). */
  readonly bytes: number;
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
  /** gzip level 1–9. @default 6 (zlib's default) */
  readonly gzipLevel?: number;
}

interface Walk {
  files: number;
  directories: number;
  symlinks: number;
  bytes: number;
  vanished: string[];
  changed: string[];
  skipped: string[];
  unreadable: string[];
}

const isDenied = (err: unknown): boolean => ['EACCES', 'EPERM'].includes((err as NodeJS.ErrnoException).code ?? '');
const isGone = (err: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');

function header(name: string, st: Stats, extra: Partial<Headers>): Headers {
  // The whole st_mode, file type bits included: tar-stream writes only the permission bits, but takes a
  // mode of 0 (a file chmod 000) as "unset" and writes its default 0644 instead.
  return { name, mode: st.mode, uid: st.uid, gid: st.gid, mtime: st.mtime, ...extra };
}

/** Writes `buf` to a tar entry, waiting for 'drain' when the pack is backed up; rejects if it closes. */
function write(entry: Sink, buf: Buffer): Promise<void> {
  if (entry.write(buf)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (err?: Error): void => {
      entry.off('drain', onDrain);
      entry.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = (): void => settle();
    // The consumer stopped (a write error downstream destroyed the pipeline): stop reading the file.
    const onClose = (): void => settle(new Error('archive stream closed'));
    entry.on('drain', onDrain);
    entry.on('close', onClose);
  });
}

function endEntry(pack: Pack, headers: Headers, body?: (entry: Sink) => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    const entry = pack.entry(headers, (err) => (err ? reject(err) : resolve()));
    // Without a listener an entry destroyed with the pipeline would crash the process.
    entry.on('error', reject);
    if (!body) return;
    body(entry).then(() => entry.end(undefined), (err: unknown) => {
      entry.destroy(err as Error);
      reject(err);
    });
  });
}

async function addFile(pack: Pack, full: string, rel: string, walk: Walk, options: ArchiveOptions): Promise<void> {
  let handle;
  try {
    // O_NOFOLLOW: a file replaced by a symlink since lstat is not followed out of the volume.
    handle = await open(full, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if (isGone(err) || (err as NodeJS.ErrnoException).code === 'ELOOP') return void walk.vanished.push(rel);
    throw err;
  }
  try {
    const before = await handle.stat();
    const size = before.size;
    let torn = false;
    await endEntry(pack, header(rel, before, { type: 'file', size }), async (entry) => {
      const buf = Buffer.allocUnsafe(READ_CHUNK);
      let done = 0;
      while (done < size) {
        const { bytesRead } = await handle.read(buf, 0, Math.min(READ_CHUNK, size - done), done);
        if (bytesRead === 0) {
          // Shrank while read: pad with zeros so the entry keeps its declared size and the tar stays valid.
          torn = true;
          const zeros = Buffer.alloc(Math.min(READ_CHUNK, size - done));
          await write(entry, zeros);
          done += zeros.length;
          continue;
        }
        // A copy: `buf` is read into again while the tar stream may still hold this chunk.
        await write(entry, Buffer.from(buf.subarray(0, bytesRead)));
        done += bytesRead;
        options.onBytes?.(bytesRead);
      }
    });
    const after = await handle.stat();
    if (torn || after.size !== before.size || after.mtimeMs !== before.mtimeMs) {
      walk.changed.push(rel);
      options.logger.warn({ path: rel, sizeBefore: before.size, sizeAfter: after.size }, 'file changed while being archived: its copy may be torn');
    }
    walk.files++;
    walk.bytes += size;
  } finally {
    await handle.close();
  }
}

async function addTree(pack: Pack, dir: string, prefix: string, walk: Walk, options: ArchiveOptions): Promise<void> {
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
        options.logger.warn({ path: rel }, 'file vanished before it was archived');
        continue;
      }
      throw err;
    }
    try {
      if (st.isDirectory()) {
        if (!scanOnly) await endEntry(pack, header(`${rel}/`, st, { type: 'directory' }));
        if (!scanOnly) walk.directories++;
        await addTree(pack, full, rel, walk, options);
      } else if (st.isSymbolicLink()) {
        const target = await readlink(full);
        if (!scanOnly) await endEntry(pack, header(rel, st, { type: 'symlink', linkname: target }));
        walk.symlinks++;
      } else if (st.isFile()) {
        if (scanOnly) await (await open(full, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)).close();
        else await addFile(pack, full, rel, walk, options);
      } else {
        walk.skipped.push(rel);
        options.logger.warn({ path: rel }, 'not a regular file, directory or symlink (socket, FIFO or device): skipped');
      }
    } catch (err) {
      if (isDenied(err)) walk.unreadable.push(rel);
      else if (isGone(err)) walk.vanished.push(rel);
      else throw err;
    }
  }
}

/**
 * Archives `sourceDir` into gzip-compressed tar bytes, returned as a stream the caller writes to disk,
 * and a promise of the result that settles once the walk is done (reject: an I/O error other than a
 * vanished, changed or unreadable file).
 */
export function archiveDirectory(options: ArchiveOptions): { readonly stream: AsyncIterable<Buffer>; readonly result: Promise<ArchiveResult> } {
  const pack = tarPack();
  const gzip = createGzip({ level: options.gzipLevel ?? 6 });
  const walk: Walk = { files: 0, directories: 0, symlinks: 0, bytes: 0, vanished: [], changed: [], skipped: [], unreadable: [] };
  pack.pipe(gzip);
  pack.on('error', (err: Error) => gzip.destroy(err));
  // The consumer gave up (disk full, SIGTERM): tear the tar side down so the walk ends at once.
  gzip.on('close', () => pack.destroy());
  const result = addTree(pack, options.sourceDir, '', walk, options).then(
    () => {
      pack.finalize();
      return walk as ArchiveResult;
    },
    (err: unknown) => {
      gzip.destroy(err as Error);
      throw err;
    },
  );
  // The result is awaited after the stream is drained; keep an early rejection from being "unhandled".
  result.catch(() => undefined);
  return { stream: gzip, result };
}
