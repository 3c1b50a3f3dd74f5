import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { backupFileName, SIDECAR_SUFFIX } from '../../src/backup/backup-names.ts';
import { directoryRetentionCandidates, quickCheckBackup } from '../../src/backup/retention-candidates.ts';
import { planRetention } from '../../src/backup/retention.ts';
import { formatSidecar } from '../../src/backup/sidecar.ts';
import { archiveBytes, putVerified as put, snapshotBytes } from './backup-fixtures.ts';
import { removeTempDirsAfterEach, tempDir } from './temp-dirs.ts';

removeTempDirsAfterEach();

describe('quickCheckBackup', () => {
  it('passes a sound snapshot and a sound archive, each with its sidecar', async () => {
    const dir = tempDir('bks-quick-');
    put(dir, 'etcd-20261130T020000Z.db', snapshotBytes());
    put(dir, 'pg-20261130T020000Z.tar.gz', archiveBytes());
    expect(await quickCheckBackup(dir, 'etcd-20261130T020000Z.db', 'etcd-snapshot')).toBeUndefined();
    expect(await quickCheckBackup(dir, 'pg-20261130T020000Z.tar.gz', 'volume-archive')).toBeUndefined();
  });

  it.each([
    ['8 bytes of garbage without a sidecar', 'etcd-20261130T020000Z.db', Buffer.from('garbage!'), false, /no \.sha256 sidecar/],
    ['8 bytes of garbage with a forged sidecar', 'etcd-20261130T020000Z.db', Buffer.from('garbage!'), true, /size 8 is not a bbolt database plus etcd's 32-byte trailer/],
    ['a snapshot cut short (its meta page counts more pages)', 'etcd-20261130T020000Z.db', snapshotBytes(4, 6), true, /meta page counts 6 pages of 4096: truncated/],
    ['a snapshot-sized file with no bbolt meta page', 'etcd-20261130T020000Z.db', Buffer.alloc(4 * 4096 + 32, 7), true, /no valid bbolt meta page/],
    ['an archive cut short', 'pg-20261130T020000Z.tar.gz', archiveBytes().subarray(0, archiveBytes().length - 1), true, /not whole 512-byte tar blocks/],
    ['a gzip of something that is not a tar', 'pg-20261130T020000Z.tar.gz', gzipSync(Buffer.from('hello')), true, /gives 5 uncompressed bytes, not whole 512-byte tar blocks/],
    ['a file that is not gzip', 'pg-20261130T020000Z.tar.gz', Buffer.alloc(4096, 1), true, /no gzip header/],
  ])('fails %s', async (_what, file, bytes, sidecar, reason) => {
    const dir = tempDir('bks-quick-');
    put(dir, file, bytes, sidecar);
    expect(await quickCheckBackup(dir, file, file.endsWith('.db') ? 'etcd-snapshot' : 'volume-archive')).toMatch(reason);
  });

  it('fails a sidecar written for another name, a directory and a symlink under a backup name', async () => {
    const dir = tempDir('bks-quick-');
    put(dir, 'etcd-20261130T020000Z.db', snapshotBytes(), false);
    writeFileSync(join(dir, `etcd-20261130T020000Z.db${SIDECAR_SUFFIX}`), formatSidecar('0'.repeat(64), 'etcd-20261129T020000Z.db'));
    expect(await quickCheckBackup(dir, 'etcd-20261130T020000Z.db', 'etcd-snapshot')).toMatch(/\.sha256 is not a sha256sum line for it/);
    mkdirSync(join(dir, 'etcd-20261128T020000Z.db'));
    expect(await quickCheckBackup(dir, 'etcd-20261128T020000Z.db', 'etcd-snapshot')).toBe('not a regular file');
    symlinkSync(join(dir, 'etcd-20261130T020000Z.db'), join(dir, 'etcd-20261127T020000Z.db'));
    expect(await quickCheckBackup(dir, 'etcd-20261127T020000Z.db', 'etcd-snapshot')).toBe('not a regular file');
  });
});

describe('retention over a directory (the runner\'s path)', () => {
  const now = Date.UTC(2026, 10, 30, 3, 0, 0);

  it('etcd-20991231T000000Z.db, 8 bytes, holds no --keep-last slot: real backups stay, it is reported and kept', async () => {
    const dir = tempDir('bks-attack-');
    const real = [27, 28, 29].map((d) => backupFileName('etcd', Date.UTC(2026, 10, d, 2), 'etcd-snapshot'));
    for (const file of real) put(dir, file, snapshotBytes());
    writeFileSync(join(dir, 'etcd-20991231T000000Z.db'), 'garbage!');
    const justWritten = backupFileName('etcd', Date.UTC(2026, 10, 30, 2), 'etcd-snapshot');
    put(dir, justWritten, snapshotBytes());
    const candidates = await directoryRetentionCandidates(dir, readdirSync(dir), 'etcd', justWritten);
    const plan = planRetention({ candidates, policy: { keepLast: 3 }, justWritten: { name: justWritten, time: Date.UTC(2026, 10, 30, 2) }, now });
    expect(plan.keep).toEqual([justWritten, real[2], real[1]]);
    expect(plan.delete).toEqual([real[0], `${real[0]}${SIDECAR_SUFFIX}`]);
    expect(plan.ignored).toEqual([{ name: 'etcd-20991231T000000Z.db', reason: expect.stringMatching(/^not verified: no \.sha256 sidecar/) }]);
  });

  it('the same file with a forged sidecar and a valid shape is still not counted: its date is beyond now + the skew', async () => {
    const dir = tempDir('bks-attack-');
    const real = [28, 29].map((d) => backupFileName('etcd', Date.UTC(2026, 10, d, 2), 'etcd-snapshot'));
    for (const file of [...real, 'etcd-20991231T000000Z.db']) put(dir, file, snapshotBytes());
    const justWritten = backupFileName('etcd', Date.UTC(2026, 10, 30, 2), 'etcd-snapshot');
    const candidates = await directoryRetentionCandidates(dir, readdirSync(dir), 'etcd', justWritten);
    const plan = planRetention({ candidates, policy: { keepLast: 2 }, justWritten: { name: justWritten, time: Date.UTC(2026, 10, 30, 2) }, now });
    expect(plan.keep).toEqual([justWritten, real[1]]);
    expect(plan.delete).toEqual([real[0], `${real[0]}${SIDECAR_SUFFIX}`]);
    expect(plan.ignored).toEqual([{ name: 'etcd-20991231T000000Z.db', reason: expect.stringMatching(/^dated 2099-12-31T00:00:00\.000Z, later than now/) }]);
  });
});
