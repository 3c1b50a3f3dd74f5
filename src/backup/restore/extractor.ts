/**
 * Writes a volume archive's entries into the target directory as GNU tar extracts them: modes exactly
 * as archived (`--preserve-permissions`), owners only when running as root (`--same-owner`, GNU tar's
 * default for root), mtimes, symbolic links (owner and mtime of the link itself), hard links, sparse
 * files with their holes punched back (ftruncate to the real size, data written at its offsets).
 * Directories are created owner-writable and get their mode, owner and mtime at the end, deepest first,
 * so a read-only directory still receives its files and its mtime is not moved by them.
 *
 * Nothing is written through a symbolic link: every entry's parent chain is checked with lstat (a
 * symbolic link already in the target, with `--overwrite`, is refused like one from the archive),
 * files are opened O_NOFOLLOW|O_EXCL after removing what was there, and the archive-level rules are
 * {@link EntryPlan}'s. The reader calls the sink synchronously; the work is queued and
 * {@link Extractor.drain} lets the stream wait for it, so memory stays at one chunk.
 */
import { constants } from 'node:fs';
import { chmod, link, lchown, lstat, lutimes, mkdir, open, rmdir, symlink, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { EntryMetadata } from '../tar-header.ts';
import type { TarSink } from '../tar-reader.ts';
import { EntryPlan, UnsafeEntryError, type PlannedEntry } from './entry-paths.ts';

/** Options of {@link Extractor}. */
export interface ExtractorOptions {
  /** The target directory (exists). */
  readonly targetDir: string;
  /** Restore owners (uid/gid): GNU tar does as root. @default whether the process runs as root */
  readonly sameOwner?: boolean;
  /** Hears of every data byte written (progress). @default none */
  readonly onBytes?: (bytes: number) => void;
}

/** Counts of what was extracted. */
export interface ExtractStats {
  files: number;
  directories: number;
  symlinks: number;
  hardLinks: number;
  /** Data bytes written (a sparse file's holes not counted). */
  bytes: number;
}

/** The file being written: its handle and where the next data bytes go. */
interface OpenFile {
  readonly handle: FileHandle;
  readonly metadata: EntryMetadata;
  /** Data segments still to fill, the first one partly done when `doneInFirst` > 0. */
  readonly segments: { offset: number; length: number }[];
  doneInFirst: number;
}

/** A {@link TarSink} that writes the archive into {@link ExtractorOptions.targetDir}. */
export class Extractor implements TarSink {
  readonly #plan = new EntryPlan();
  readonly #options: ExtractorOptions;
  readonly #sameOwner: boolean;
  /** Directories known to be real directories (not links), as joined component paths. */
  readonly #directories = new Set<string>(['']);
  /** Directory entries whose metadata is applied at the end. */
  readonly #deferred: PlannedEntry[] = [];
  #chain: Promise<void> = Promise.resolve();
  #file: Promise<OpenFile | undefined> = Promise.resolve(undefined);
  readonly stats: ExtractStats = { files: 0, directories: 0, symlinks: 0, hardLinks: 0, bytes: 0 };

  constructor(options: ExtractorOptions) {
    this.#options = options;
    this.#sameOwner = options.sameOwner ?? process.geteuid?.() === 0;
  }

  /** {@link TarSink.entry}: checks the entry now (throws {@link UnsafeEntryError}) and queues its creation. */
  entry(metadata: EntryMetadata, dataBytes: number): void {
    const planned = this.#plan.check(metadata);
    this.#enqueue(async () => {
      switch (metadata.type) {
        case 'directory':
          return this.#directory(planned);
        case 'file': {
          const file = await this.#openFile(planned, dataBytes !== metadata.size);
          this.#file = Promise.resolve(file);
          if (file.segments.length === 0) await this.#closeFile(file);
          return;
        }
        case 'symlink':
          return this.#symlink(planned);
        case 'link':
          return this.#hardLink(planned);
      }
    });
  }

  /** {@link TarSink.data}: queues the write of the current file's next bytes. */
  data(chunk: Buffer): void {
    this.#enqueue(async () => {
      const file = await this.#file;
      if (!file) throw new Error('archive data without a file entry');
      let at = 0;
      while (at < chunk.length) {
        const segment = file.segments[0];
        if (!segment) throw new Error(`${file.metadata.name}: more data than its size`);
        const n = Math.min(segment.length - file.doneInFirst, chunk.length - at);
        await file.handle.write(chunk, at, n, segment.offset + file.doneInFirst);
        at += n;
        file.doneInFirst += n;
        if (file.doneInFirst === segment.length) {
          file.segments.shift();
          file.doneInFirst = 0;
        }
      }
      this.stats.bytes += chunk.length;
      this.#options.onBytes?.(chunk.length);
      if (file.segments.length === 0) await this.#closeFile(file);
    });
  }

  /** Waits for the queued work; rejects with the first failure. */
  drain(): Promise<void> {
    return this.#chain;
  }

  /** After the last entry: the directories' metadata, deepest first. */
  async finish(): Promise<ExtractStats> {
    await this.#chain;
    const open = await this.#file;
    if (open) throw new Error(`${open.metadata.name}: the archive ended inside this file`);
    for (const entry of this.#deferred.reverse()) await this.#applyMetadata(this.#pathOf(entry.path), entry.metadata, false);
    return this.stats;
  }

  #enqueue(work: () => Promise<void>): void {
    // After a failure nothing more is written: the chain stays rejected with the first error.
    this.#chain = this.#chain.then(work);
    this.#chain.catch(() => undefined);
  }

  #pathOf(path: readonly string[]): string {
    return join(this.#options.targetDir, ...path);
  }

  /** Makes sure every parent of `path` is a real directory, creating missing ones (as GNU tar does). */
  async #parents(name: string, path: readonly string[]): Promise<void> {
    for (let i = 1; i < path.length; i++) {
      const key = path.slice(0, i).join('/');
      if (this.#directories.has(key)) continue;
      const full = this.#pathOf(path.slice(0, i));
      const st = await lstat(full).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      });
      if (st?.isSymbolicLink()) throw new UnsafeEntryError(name, `its parent ${JSON.stringify(key)} is a symbolic link in the target directory: it would be written through the link`);
      if (st && !st.isDirectory()) throw new Error(`archive entry ${JSON.stringify(name)}: its parent ${JSON.stringify(key)} exists and is not a directory`);
      if (!st) await mkdir(full, { mode: 0o700 });
      this.#directories.add(key);
    }
  }

  /** Removes a non-directory at `full` so the entry can take its place; a directory stays. */
  async #clear(planned: PlannedEntry, full: string): Promise<'directory' | 'none'> {
    const st = await lstat(full).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (!st) return 'none';
    if (st.isDirectory()) {
      if (planned.metadata.type === 'directory') return 'directory';
      // GNU tar removes an empty directory in the way and fails on a full one: so does this.
      await rmdir(full);
      return 'none';
    }
    await unlink(full);
    return 'none';
  }

  async #directory(planned: PlannedEntry): Promise<void> {
    const key = planned.path.join('/');
    this.stats.directories++;
    if (planned.path.length > 0) {
      await this.#parents(planned.metadata.name, planned.path);
      const full = this.#pathOf(planned.path);
      if ((await this.#clear(planned, full)) === 'none') await mkdir(full, { mode: 0o700 });
      this.#directories.add(key);
    }
    this.#deferred.push(planned);
  }

  async #openFile(planned: PlannedEntry, sparse: boolean): Promise<OpenFile> {
    const { metadata } = planned;
    await this.#parents(metadata.name, planned.path);
    const full = this.#pathOf(planned.path);
    await this.#clear(planned, full);
    this.#forget(planned.path);
    const handle = await open(full, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    // A sparse file: the real size first (the holes), then its data at the segments' offsets.
    if (sparse) await handle.truncate(metadata.size);
    const segments = sparse ? metadata.segments.map((s) => ({ ...s })) : metadata.size > 0 ? [{ offset: 0, length: metadata.size }] : [];
    this.stats.files++;
    return { handle, metadata, segments, doneInFirst: 0 };
  }

  async #closeFile(file: OpenFile): Promise<void> {
    this.#file = Promise.resolve(undefined);
    try {
      const { metadata, handle } = file;
      if (this.#sameOwner) await handle.chown(metadata.uid, metadata.gid);
      // After chown, which clears setuid/setgid.
      await handle.chmod(metadata.mode & 0o7777);
      await handle.utimes(...times(metadata));
      await handle.datasync();
    } finally {
      await file.handle.close();
    }
  }

  async #symlink(planned: PlannedEntry): Promise<void> {
    await this.#parents(planned.metadata.name, planned.path);
    const full = this.#pathOf(planned.path);
    await this.#clear(planned, full);
    this.#forget(planned.path);
    await symlink(planned.metadata.linkname ?? '', full);
    await this.#applyMetadata(full, planned.metadata, true);
    this.stats.symlinks++;
  }

  async #hardLink(planned: PlannedEntry): Promise<void> {
    await this.#parents(planned.metadata.name, planned.path);
    const full = this.#pathOf(planned.path);
    await this.#clear(planned, full);
    this.#forget(planned.path);
    // link(2) does not follow a symbolic link as target: a link to a link is a link to the link.
    await link(this.#pathOf(planned.linkPath ?? []), full);
    this.stats.hardLinks++;
  }

  /** `path` is no longer a known directory (nor is anything under it). */
  #forget(path: readonly string[]): void {
    const key = path.join('/');
    for (const dir of this.#directories) if (dir === key || dir.startsWith(`${key}/`)) this.#directories.delete(dir);
  }

  async #applyMetadata(full: string, metadata: EntryMetadata, isLink: boolean): Promise<void> {
    if (this.#sameOwner) await lchown(full, metadata.uid, metadata.gid);
    if (!isLink) await chmod(full, metadata.mode & 0o7777);
    await lutimes(full, ...times(metadata));
  }
}

/**
 * atime and mtime as Dates: Node takes a negative number of seconds for "now" (a 1960 mtime would
 * become today's), a Date before 1970 as it is.
 */
function times(metadata: EntryMetadata): [Date, Date] {
  const mtime = new Date(metadata.mtime * 1000);
  return [mtime, mtime];
}
