/**
 * One writer per schedule: a lock file `<dest>/.<schedule>.lock` created with O_EXCL, holding who took
 * it and when. A second run of the same schedule (concurrencyPolicy Allow, or a retry racing a slow Pod)
 * fails cleanly instead of writing beside the first. The holder touches the file every
 * `heartbeatMs`; a lock untouched for `staleMs` belongs to a Pod that was killed (SIGKILL, node loss)
 * and is taken over, so one crash never blocks the schedule for good. O_EXCL create and rename are
 * atomic on local file systems and on NFSv3+.
 *
 * Takeover never unlinks blindly by name: two runs that both saw the stale lock would both unlink,
 * and the second would delete the first one's fresh lock. A run first creates (O_EXCL) a takeover
 * ticket named after the stale file's inode and mtime, so exactly one run may remove that file, and it
 * checks the lock is still that file before it does. The lock holds a random token, and the holder
 * touches and removes the lock only while that token is still in it.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { constants } from 'node:fs';
import { open, stat, unlink, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { realClock, type Clock, type TimerHandle } from '../runtime/clock.ts';
import { BACKUP_FILE_MODE } from './durable-file.ts';

/** Options of {@link acquireLock}. */
export interface LockOptions {
  /** Destination directory. */
  readonly dir: string;
  /** The lock file's name in `dir`. */
  readonly name: string;
  /** How often the holder refreshes the lock's mtime. @default 5_000 */
  readonly heartbeatMs?: number;
  /**
   * Age of the mtime after which a lock counts as abandoned. Short enough that the Job's own retry of
   * an OOM-killed run (backoff 10 s, 20 s, 40 s…) gets through, long enough for six missed heartbeats.
   * @default 30_000
   */
  readonly staleMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
}

/** A held lock. */
export interface HeldLock {
  readonly path: string;
  /** Stops the heartbeat and removes the lock file if it is still this run's (same token). */
  release(): Promise<void>;
}

/** The lock is held by a live run. */
export class LockBusyError extends Error {
  constructor(readonly path: string, readonly holder: string, staleSeconds: number) {
    super(`another backup of this schedule is running (lock ${path} held by ${holder}); not starting a second writer (a lock untouched for ${staleSeconds} s is taken over)`);
    this.name = 'LockBusyError';
  }
}

/**
 * Takes the lock or throws {@link LockBusyError}. A stale lock (mtime older than staleMs) is removed
 * through {@link takeOver} and the create retried once; if another run won that race, this one is busy.
 */
export async function acquireLock(options: LockOptions): Promise<HeldLock & { readonly tookOverStale: string | undefined }> {
  const clock = options.clock ?? realClock;
  const heartbeatMs = options.heartbeatMs ?? 5_000;
  const staleMs = options.staleMs ?? 30_000;
  const path = join(options.dir, options.name);
  const holder = `${hostname()} pid ${process.pid} since ${new Date(clock.now()).toISOString()}`;
  const token = randomBytes(16).toString('hex');
  let tookOverStale: string | undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, BACKUP_FILE_MODE);
      try {
        await handle.writeFile(`${holder}\n${TOKEN_PREFIX}${token}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const current = await describe(path);
      if (attempt === 0 && current !== undefined && clock.now() - current.mtimeMs > staleMs && (await takeOver(path, current, clock.now(), staleMs))) {
        tookOverStale = current.holder;
        continue;
      }
      throw new LockBusyError(path, current?.holder ?? 'a run that just finished or is taking the lock over', staleMs / 1000);
    }
  }
  let timer: TimerHandle | undefined;
  let released = false;
  const beat = (): void => {
    if (released) return;
    timer = clock.setTimeout(() => {
      const now = new Date(clock.now());
      // A failed touch is not fatal: at worst another run takes the lock over after staleMs.
      // Only our own lock is touched: a lock taken over by another run must be allowed to go stale.
      ownedBy(path, token)
        .then((ours) => (ours ? utimes(path, now, now) : undefined))
        .catch(() => undefined)
        .finally(beat);
    }, heartbeatMs);
  };
  beat();
  return {
    path,
    tookOverStale,
    async release() {
      if (released) return;
      released = true;
      if (timer) clock.clearTimeout(timer);
      // Another run may have taken the lock over (we were stale); its lock is not ours to remove.
      if (await ownedBy(path, token).catch(() => false)) await unlink(path).catch(() => undefined);
    },
  };
}

/** The line before the random token in the lock file. */
const TOKEN_PREFIX = 'token ';

/** Something other than a regular file sits at the lock path: no run can take the lock. */
export class LockPathError extends Error {
  constructor(readonly path: string, what: string) {
    super(`the lock path ${path} is ${what}, not a regular file: no backup of this schedule can run until it is removed`);
    this.name = 'LockPathError';
  }
}

/**
 * The lock file's text, inode and mtime, read without ever blocking: O_NONBLOCK so a FIFO planted at
 * the path does not hang the run (a blocked open(2) holds a libuv thread, and SIGTERM cannot end it),
 * O_NOFOLLOW so a symlink is not followed. Throws {@link LockPathError} for anything but a file.
 */
async function readLock(path: string): Promise<{ text: string; ino: number; mtimeMs: number }> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new LockPathError(path, 'a symbolic link');
    throw err;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new LockPathError(path, info.isFIFO() ? 'a FIFO' : info.isDirectory() ? 'a directory' : info.isSocket() ? 'a socket' : 'a device');
    // A lock file holds two short lines; more is not a lock this runner wrote.
    const buf = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    return { text: buf.subarray(0, bytesRead).toString('utf8'), ino: info.ino, mtimeMs: info.mtimeMs };
  } finally {
    await handle.close();
  }
}

/** Whether the lock at `path` still holds `token`. */
async function ownedBy(path: string, token: string): Promise<boolean> {
  const text = await readLock(path).then((l) => l.text, () => '');
  return text.split('\n').includes(`${TOKEN_PREFIX}${token}`);
}

/**
 * Removes the stale lock `seen` (that very file: same inode and mtime) if this run wins the right to:
 * an O_EXCL ticket named after that file, so of all runs that judged it stale exactly one proceeds.
 * The winner checks the lock is still that file, unlinks it and drops the ticket; a later run that
 * gets the ticket then finds another file (or none) and is busy. A ticket left by a run killed
 * mid-takeover is removed once it is older than staleMs, so it cannot block the schedule for good.
 */
async function takeOver(path: string, seen: { ino: number; mtimeMs: number }, now: number, staleMs: number): Promise<boolean> {
  const ticket = `${path}.takeover-${seen.ino}-${Math.round(seen.mtimeMs * 1000)}`;
  try {
    await (await open(ticket, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, BACKUP_FILE_MODE)).close();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const left = await stat(ticket).catch(() => undefined);
    if (left && now - left.mtimeMs > staleMs) await unlink(ticket).catch(() => undefined);
    return false;
  }
  try {
    const current = await stat(path).catch(() => undefined);
    if (current === undefined || current.ino !== seen.ino || current.mtimeMs !== seen.mtimeMs) return false;
    await unlink(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  } finally {
    await unlink(ticket).catch(() => undefined);
  }
}

async function describe(path: string): Promise<{ holder: string; mtimeMs: number; ino: number } | undefined> {
  try {
    const lock = await readLock(path);
    return { holder: lock.text.split('\n')[0]!.trim() || '?', mtimeMs: lock.mtimeMs, ino: lock.ino };
  } catch (err) {
    if (err instanceof LockPathError) throw err;
    return undefined;
  }
}
