import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireLock, LockBusyError } from '../../src/backup/backup-lock.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { removeTempDirsAfterEach, tempDir } from './temp-dirs.ts';

removeTempDirsAfterEach();

describe('acquireLock', () => {
  it('creates a 0600 lock naming its holder and removes it on release', async () => {
    const dir = tempDir('bks-lock-');
    const lock = await acquireLock({ dir, name: '.s.lock', clock: new FakeClock() });
    expect(statSync(lock.path).mode & 0o777).toBe(0o600);
    expect(readFileSync(lock.path, 'utf8')).toMatch(/pid \d+ since 2026-01-01T00:00:00.000Z/);
    await lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses a second holder while the first is alive, and leaves the first lock in place', async () => {
    const dir = tempDir('bks-lock-');
    const clock = new FakeClock(Date.now());
    const first = await acquireLock({ dir, name: '.s.lock', clock });
    await expect(acquireLock({ dir, name: '.s.lock', clock })).rejects.toBeInstanceOf(LockBusyError);
    expect(readdirSync(dir)).toEqual(['.s.lock']);
    await first.release();
    const second = await acquireLock({ dir, name: '.s.lock', clock });
    expect(second.tookOverStale).toBeUndefined();
    await second.release();
  });

  it('takes over a lock whose mtime is older than staleMs', async () => {
    const dir = tempDir('bks-lock-');
    writeFileSync(join(dir, '.s.lock'), 'dead-pod pid 7\n');
    const clock = new FakeClock(Date.now() + 121_000);
    const lock = await acquireLock({ dir, name: '.s.lock', clock, staleMs: 120_000 });
    expect(lock.tookOverStale).toBe('dead-pod pid 7');
    await lock.release();
  });

  it.each([
    [29_000, 'busy'],
    [31_000, 'taken over'],
  ])('by default treats a lock untouched for %i ms as %s', async (ageMs, outcome) => {
    const dir = tempDir('bks-lock-');
    writeFileSync(join(dir, '.s.lock'), 'other pid 9\n');
    const clock = new FakeClock(statSync(join(dir, '.s.lock')).mtimeMs + ageMs);
    const attempt = acquireLock({ dir, name: '.s.lock', clock });
    if (outcome === 'busy') await expect(attempt).rejects.toThrow(/held by other pid 9\); not starting a second writer \(a lock untouched for 30 s is taken over\)/);
    else await (await attempt).release();
  });

  it('keeps a held lock fresh: the heartbeat touches its mtime', async () => {
    const dir = tempDir('bks-lock-');
    const clock = new FakeClock(Date.now() + 3_600_000);
    const lock = await acquireLock({ dir, name: '.s.lock', clock, heartbeatMs: 10_000 });
    const old = new Date(0);
    utimesSync(lock.path, old, old);
    clock.step(10_000);
    await expect.poll(() => statSync(lock.path).mtimeMs).toBe(clock.now());
    await lock.release();
  });

  it('lets exactly one of many concurrent runs take over a stale lock (no run deletes a fresh lock)', async () => {
    const dir = tempDir('bks-lock-');
    const clock = new FakeClock(Date.now());
    const old = new Date(Date.now() - 121_000);
    for (let trial = 0; trial < 100; trial++) {
      writeFileSync(join(dir, '.s.lock'), 'dead-pod pid 7\n');
      utimesSync(join(dir, '.s.lock'), old, old);
      const attempts = await Promise.allSettled(Array.from({ length: 6 }, () => acquireLock({ dir, name: '.s.lock', clock, staleMs: 120_000 })));
      const held = attempts.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
      for (const a of attempts) if (a.status === 'rejected') expect(a.reason).toBeInstanceOf(LockBusyError);
      expect(held, `trial ${trial}`).toHaveLength(1);
      expect(readdirSync(dir)).toEqual(['.s.lock']);
      expect(readFileSync(join(dir, '.s.lock'), 'utf8')).not.toContain('dead-pod');
      await Promise.all(held.map((l) => l.release()));
      expect(readdirSync(dir)).toEqual([]);
    }
  });

  it('release leaves a lock that another run took over in place, and the heartbeat does not touch it', async () => {
    const dir = tempDir('bks-lock-');
    const clock = new FakeClock(Date.now() + 3_600_000);
    const lock = await acquireLock({ dir, name: '.s.lock', clock, heartbeatMs: 10_000 });
    // This run looked dead (stale): another run took the lock over and wrote its own.
    unlinkSync(lock.path);
    writeFileSync(lock.path, 'other pid 9\ntoken 0123\n');
    const old = new Date(0);
    utimesSync(lock.path, old, old);
    clock.step(10_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(statSync(lock.path).mtimeMs).toBe(0);
    await lock.release();
    expect(readFileSync(lock.path, 'utf8')).toBe('other pid 9\ntoken 0123\n');
  });

  it('removes a takeover ticket left by a run killed mid-takeover once it is older than staleMs, so the schedule is not blocked for good', async () => {
    const dir = tempDir('bks-lock-');
    const lock = join(dir, '.s.lock');
    writeFileSync(lock, 'dead-pod pid 7\n');
    const old = new Date(Date.now() - 121_000);
    utimesSync(lock, old, old);
    const info = statSync(lock);
    const ticket = `${lock}.takeover-${info.ino}-${Math.round(info.mtimeMs * 1000)}`;
    writeFileSync(ticket, '');
    const clock = new FakeClock(Date.now());
    await expect(acquireLock({ dir, name: '.s.lock', clock, staleMs: 120_000 })).rejects.toBeInstanceOf(LockBusyError);
    utimesSync(ticket, old, old);
    await expect(acquireLock({ dir, name: '.s.lock', clock, staleMs: 120_000 })).rejects.toBeInstanceOf(LockBusyError);
    const lockHeld = await acquireLock({ dir, name: '.s.lock', clock, staleMs: 120_000 });
    expect(lockHeld.tookOverStale).toBe('dead-pod pid 7');
    await lockHeld.release();
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('acquireLock, something else at the lock path', () => {
  it('fails at once naming a FIFO planted at the lock path instead of blocking on it', async () => {
    const dir = tempDir('bks-lock-');
    execFileSync('mkfifo', [join(dir, '.s.lock')]);
    // Before: the open(2) of the FIFO for reading blocked forever (and a libuv thread with it).
    const outcome = await Promise.race([
      acquireLock({ dir, name: '.s.lock', clock: new FakeClock() }).then(() => 'acquired', (err: Error) => err.message),
      new Promise((resolve) => setTimeout(resolve, 5_000, 'still blocked after 5 s')),
    ]);
    expect(outcome).toMatch(/lock path .*\.s\.lock is a FIFO, not a regular file/);
  });

  it('names a directory at the lock path', async () => {
    const dir = tempDir('bks-lock-');
    mkdirSync(join(dir, '.s.lock'));
    await expect(acquireLock({ dir, name: '.s.lock', clock: new FakeClock() })).rejects.toThrow(/is a directory, not a regular file/);
  });
});
