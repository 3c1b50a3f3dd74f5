/**
 * One writer per schedule: a lock file `<dest>/.<schedule>.lock` created with O_EXCL, holding who took
 * it and when. A second run of the same schedule (concurrencyPolicy Allow, or a retry racing a slow Pod)
 * fails cleanly instead of writing beside the first. The holder touches the file every
 * `heartbeatMs`; a lock untouched for `staleMs` belongs to a Pod that was killed (SIGKILL, node loss)
 * and is taken over, so one crash never blocks the schedule for good. O_EXCL create and rename are
 * atomic on local file systems and on NFSv3+.
 */
import { hostname } from 'node:os';
import { constants } from 'node:fs';
import { open, readFile, stat, unlink, utimes } from 'node:fs/promises';
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
  /** Stops the heartbeat and removes the lock file. */
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
 * and the create retried once; if another run won that race, this one is busy.
 */
export async function acquireLock(options: LockOptions): Promise<HeldLock & { readonly tookOverStale: string | undefined }> {
  const clock = options.clock ?? realClock;
  const heartbeatMs = options.heartbeatMs ?? 5_000;
  const staleMs = options.staleMs ?? 30_000;
  const path = join(options.dir, options.name);
  const holder = `${hostname()} pid ${process.pid} since ${new Date(clock.now()).toISOString()}`;
  let tookOverStale: string | undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, BACKUP_FILE_MODE);
      try {
        await handle.writeFile(`${holder}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const current = await describe(path);
      if (attempt === 0 && current !== undefined && clock.now() - current.mtimeMs > staleMs) {
        tookOverStale = current.holder;
        await unlink(path).catch(() => undefined);
        continue;
      }
      throw new LockBusyError(path, current?.holder ?? 'a run that just finished', staleMs / 1000);
    }
  }
  let timer: TimerHandle | undefined;
  let released = false;
  const beat = (): void => {
    if (released) return;
    timer = clock.setTimeout(() => {
      const now = new Date(clock.now());
      // A failed touch is not fatal: at worst another run takes the lock over after staleMs.
      utimes(path, now, now).catch(() => undefined).finally(beat);
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
      await unlink(path).catch(() => undefined);
    },
  };
}

async function describe(path: string): Promise<{ holder: string; mtimeMs: number } | undefined> {
  try {
    const [info, text] = await Promise.all([stat(path), readFile(path, 'utf8').catch(() => '?')]);
    return { holder: text.trim() || '?', mtimeMs: info.mtimeMs };
  } catch {
    return undefined;
  }
}
