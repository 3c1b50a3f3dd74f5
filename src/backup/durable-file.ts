/**
 * Durable, atomic writes into the destination directory: a hidden temp file (mode 0600: an etcd
 * snapshot holds every Secret of the cluster) → fsync → link to the final name (link fails when the name
 * exists, where rename would silently replace it) → remove the temp name → fsync the directory.
 * A final name only ever names a complete, verified file; on any failure the temp file is removed and
 * nothing else in the directory is touched.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, mkdir, open, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/** Mode of every file the runner creates. */
export const BACKUP_FILE_MODE = 0o600;

/** A temp file being written; {@link TempFile.commit} or {@link TempFile.discard} ends it. */
export class TempFile {
  #done = false;

  private constructor(
    /** Absolute path of the temp file. */
    readonly path: string,
    /** The open handle (write from position 0; the runner owns it until commit/discard). */
    readonly handle: FileHandle,
    private readonly dir: string,
  ) {}

  /**
   * Creates `<dir>/<prefix><random>` exclusively (O_EXCL: never reuses or follows an existing file),
   * mode 0600 whatever the umask allows beyond that.
   */
  static async create(dir: string, prefix: string): Promise<TempFile> {
    const path = join(dir, `${prefix}${randomBytes(6).toString('hex')}`);
    const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, BACKUP_FILE_MODE);
    return new TempFile(path, handle, dir);
  }

  /** Flushes the data to stable storage (fsync) without closing. */
  async sync(): Promise<void> {
    await this.handle.sync();
  }

  /**
   * fsync, close, then hard-link as `finalName` in the same directory, remove the temp name and fsync
   * the directory so both survive a crash. link(2) refuses an existing name (EEXIST) atomically, so a
   * final name is never replaced, not even by a second writer racing this one.
   */
  async commit(finalName: string): Promise<string> {
    if (this.#done) throw new Error(`temp file ${this.path} was already committed or discarded`);
    const target = join(this.dir, finalName);
    await this.handle.sync();
    await this.handle.close();
    try {
      await link(this.path, target);
    } catch (err) {
      await this.discard();
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new Error(`${target} already exists; refusing to replace it`, { cause: err });
      throw err;
    }
    this.#done = true;
    await unlink(this.path);
    await syncDirectory(this.dir);
    return target;
  }

  /** Closes and removes the temp file; safe to call more than once and after a failed commit. */
  async discard(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    await this.handle.close().catch(() => undefined);
    await unlink(this.path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
}

/** Writes a small file durably and atomically (temp → fsync → link → directory fsync), mode 0600. */
export async function writeFileDurably(dir: string, name: string, content: string, tempPrefix: string): Promise<string> {
  const temp = await TempFile.create(dir, tempPrefix);
  try {
    await temp.handle.writeFile(content);
    return await temp.commit(name);
  } catch (err) {
    await temp.discard();
    throw err;
  }
}

/** fsync of a directory: makes the creations, renames and deletions in it durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * `mkdir -p dir` that reports the real reason a component cannot be created. Node's recursive mkdir
 * answers ENOENT (for the parent) when the parent's own mkdir failed with EROFS, EACCES or ENOSPC, so
 * "the destination is mounted read-only" read as "no such file or directory". On ENOENT the deepest
 * existing ancestor is found and the next component created alone, which fails with the true errno.
 * A file in the way is EEXIST or ENOTDIR, as from mkdir(1).
 */
export async function makeDirectories(dir: string, mode: number): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode });
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const missing: string[] = [];
  let existing = resolve(dir);
  while ((await stat(existing).catch(() => undefined)) === undefined && dirname(existing) !== existing) {
    missing.unshift(existing);
    existing = dirname(existing);
  }
  for (const path of missing) {
    await mkdir(path, { mode }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  }
}
