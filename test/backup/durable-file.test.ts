import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDirectories, TempFile, writeFileDurably } from '../../src/backup/durable-file.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { Progress } from '../../src/backup/progress.ts';
import { pino } from 'pino';
import { removeTempDirsAfterEach, tempDir } from './temp-dirs.ts';

removeTempDirsAfterEach();

describe('TempFile', () => {
  it('creates a hidden 0600 file even under a permissive umask, and commit renames it into place', async () => {
    const dir = tempDir('bks-durable-');
    const previous = process.umask(0);
    try {
      const temp = await TempFile.create(dir, '.s.partial-');
      expect(statSync(temp.path).mode & 0o777).toBe(0o600);
      await temp.handle.write('data');
      const path = await temp.commit('s-20260101T000000Z.db');
      expect(readdirSync(dir)).toEqual(['s-20260101T000000Z.db']);
      expect(readFileSync(path, 'utf8')).toBe('data');
      expect(statSync(path).mode & 0o777).toBe(0o600);
    } finally {
      process.umask(previous);
    }
  });

  it('never replaces an existing final name: the commit fails and the temp file is removed', async () => {
    const dir = tempDir('bks-durable-');
    writeFileSync(join(dir, 's-20260101T000000Z.db'), 'first writer');
    const temp = await TempFile.create(dir, '.s.partial-');
    await temp.handle.write('second writer');
    await expect(temp.commit('s-20260101T000000Z.db')).rejects.toThrow(/already exists; refusing to replace it/);
    expect(readdirSync(dir)).toEqual(['s-20260101T000000Z.db']);
    expect(readFileSync(join(dir, 's-20260101T000000Z.db'), 'utf8')).toBe('first writer');
  });

  it('of two writers committing the same name at once, exactly one wins and the other fails without replacing it', async () => {
    const dir = tempDir('bks-durable-');
    for (let trial = 0; trial < 50; trial++) {
      const name = `s-${trial}.db`;
      const temps = await Promise.all(['first', 'second'].map(async (text) => {
        const temp = await TempFile.create(dir, '.s.partial-');
        await temp.handle.write(text);
        return temp;
      }));
      const results = await Promise.allSettled(temps.map((t) => t.commit(name)));
      expect(results.filter((r) => r.status === 'fulfilled'), `trial ${trial}`).toHaveLength(1);
      const winner = results[0]!.status === 'fulfilled' ? 'first' : 'second';
      expect(readFileSync(join(dir, name), 'utf8')).toBe(winner);
    }
    expect(readdirSync(dir).filter((f) => f.startsWith('.'))).toEqual([]);
  });

  it('discard removes the temp file and is idempotent', async () => {
    const dir = tempDir('bks-durable-');
    const temp = await TempFile.create(dir, '.s.partial-');
    await temp.discard();
    await temp.discard();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('writeFileDurably writes a small file atomically', async () => {
    const dir = tempDir('bks-durable-');
    await writeFileDurably(dir, 'x.sha256', 'abc  x\n', '.s.partial-');
    expect(readdirSync(dir)).toEqual(['x.sha256']);
  });
});

describe('Progress', () => {
  it('logs bytes, MB/s and percent every interval until stopped', () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const clock = new FakeClock();
    const progress = new Progress({ logger, clock, what: 'etcd snapshot', intervalMs: 5000 });
    progress.setTotal(100_000_000);
    progress.add(25_000_000);
    clock.step(5000);
    progress.add(25_000_000);
    clock.step(5000);
    progress.stop();
    clock.step(5000);
    expect(lines.map(({ bytes, mbPerSec, percent, msg }) => ({ bytes, mbPerSec, percent, msg }))).toEqual([
      { bytes: 25_000_000, mbPerSec: 5, percent: 25, msg: 'etcd snapshot: in progress' },
      { bytes: 50_000_000, mbPerSec: 5, percent: 50, msg: 'etcd snapshot: in progress' },
    ]);
  });
});

describe('makeDirectories', () => {
  const isRoot = process.getuid?.() === 0;
  // A read-only tmpfs needs mount(2): root (CI and the dev machine run as root).
  it.skipIf(!isRoot)('reports EROFS, not ENOENT, when the path below a read-only mount cannot be created', async () => {
    const mountPoint = tempDir('bks-ro-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', mountPoint]);
    try {
      await expect(makeDirectories(join(mountPoint, 'backups', 'etcd'), 0o700)).rejects.toMatchObject({ code: 'EROFS' });
    } finally {
      execFileSync('umount', [mountPoint]);
    }
  });

  it('creates every missing component, and reports a file in the way', async () => {
    const root = tempDir('bks-mkdir-');
    await makeDirectories(join(root, 'a', 'b', 'c'), 0o700);
    expect(statSync(join(root, 'a', 'b', 'c')).isDirectory()).toBe(true);
    writeFileSync(join(root, 'file'), '');
    await expect(makeDirectories(join(root, 'file', 'x'), 0o700)).rejects.toMatchObject({ code: 'ENOTDIR' });
  });
});
