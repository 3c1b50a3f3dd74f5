import { execFileSync } from 'node:child_process';
/**
 * The runner's robustness items (issue 30, LOW): a directory named like a backup in the destination,
 * a read-only file system under the destination path, and the termination message.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { EXIT_OK, runBackup } from '../../src/backup/run-backup.ts';
import { formatList, listBackups, verifyBackupFile } from '../../src/backup/backup-tools.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { archiveBytes, putVerified } from './backup-fixtures.ts';
import { removeTempDirsAfterEach, sourceAndDestination, tempDir } from './temp-dirs.ts';

removeTempDirsAfterEach();

function logLines(): { lines: Record<string, unknown>[]; logger: pino.Logger } {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: pino({}, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) }) };
}

const command = (source: string, destination: string) => ({ kind: 'run', source: { kind: 'pvc', sourceDir: source }, destinationDir: destination, retention: { keepLast: 1 }, schedule: 'pg', namespace: 'db' }) as const;

describe('a directory named like a backup in the destination', () => {
  it('is skipped with a warning: the run exits 0 and prunes the real backups; list skips it too', async () => {
    const { source, destination } = sourceAndDestination('table.db', 100_000, 3);
    putVerified(destination, 'pg-20260101T000000Z.tar.gz', archiveBytes());
    mkdirSync(join(destination, 'pg-20250101T000000Z.tar.gz'));
    mkdirSync(join(destination, 'pg-20260102T000000Z.db'));
    const { lines, logger } = logLines();
    const code = await runBackup(command(source, destination), { logger, clock: new FakeClock(Date.UTC(2026, 10, 30, 3, 30, 0)) });
    expect(code).toBe(EXIT_OK);
    expect(readdirSync(destination).sort()).toEqual(['pg-20250101T000000Z.tar.gz', 'pg-20260102T000000Z.db', 'pg-20261130T033000Z.tar.gz', 'pg-20261130T033000Z.tar.gz.sha256']);
    expect(lines.some((l) => l['level'] === 40 && /pg-20250101T000000Z\.tar\.gz is a directory, not a backup file: skipped/.test(String(l['msg'])))).toBe(true);
    const rows = await listBackups(destination);
    expect(rows.map((r) => r.file)).toEqual(['pg-20261130T033000Z.tar.gz']);
    expect(formatList(rows)).not.toMatch(/NO:/);
  });
});

describe('verify and list, a backup without its sidecar', () => {
  it('is not verified: verify says ok false naming the missing sidecar, list says NO', async () => {
    const { destination } = sourceAndDestination('unused', 1, 0);
    putVerified(destination, 'pg-20260101T000000Z.tar.gz', archiveBytes());
    writeFileSync(join(destination, 'pg-20260102T000000Z.tar.gz'), archiveBytes());
    const result = await verifyBackupFile(join(destination, 'pg-20260102T000000Z.tar.gz'));
    expect(result).toMatchObject({ ok: false, sidecar: 'missing', problem: expect.stringMatching(/no pg-20260102T000000Z\.tar\.gz\.sha256 sidecar/) });
    expect(await verifyBackupFile(join(destination, 'pg-20260101T000000Z.tar.gz'))).toMatchObject({ ok: true, sidecar: 'matches' });
    const rows = await listBackups(destination);
    expect(rows.map((r) => r.verification.ok)).toEqual([true, false]);
    expect(formatList(rows)).toMatch(/pg-20260102T000000Z\.tar\.gz .* NO: no pg-20260102T000000Z\.tar\.gz\.sha256 sidecar/);
  });
});

describe('a destination path below a read-only mount', () => {
  it.skipIf(process.getuid?.() !== 0)('fails saying read-only (EROFS), not "no such file or directory"', async () => {
    const { source } = sourceAndDestination('table.db', 1000, 3);
    const mountPoint = tempDir('bks-ro-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', mountPoint]);
    try {
      const { lines, logger } = logLines();
      const code = await runBackup(command(source, join(mountPoint, 'backups', 'pg')), { logger, clock: new FakeClock(Date.UTC(2026, 10, 30, 3, 30, 0)) });
      expect(code).toBe(1);
      expect(String(lines.at(-1)?.['msg'])).toMatch(/destination directory .* is not usable: the destination is mounted read-only \(EROFS .*backups\)/);
    } finally {
      execFileSync('umount', [mountPoint]);
    }
  });
});
