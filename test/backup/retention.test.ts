import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backupFileName, formatStamp, parseBackupName } from '../../src/backup/backup-names.ts';
import { planRetention } from '../../src/backup/retention.ts';

const day = (d: number): number => Date.UTC(2026, 0, d, 2, 0, 0);

describe('backup file names', () => {
  it('formats the UTC start time as yyyymmddThhmmssZ', () => {
    expect(formatStamp(Date.UTC(2026, 10, 30, 2, 0, 7, 999))).toBe('20261130T020007Z');
    expect(backupFileName('nightly-etcd', day(5), 'etcd-snapshot')).toBe('nightly-etcd-20260105T020000Z.db');
    expect(backupFileName('data.pvc', day(5), 'volume-archive')).toBe('data.pvc-20260105T020000Z.tar.gz');
  });

  it.each([
    ['nightly-etcd-20260105T020000Z.db', { schedule: 'nightly-etcd', kind: 'etcd-snapshot', time: day(5) }],
    ['a-b-20260105T020000Z.tar.gz', { schedule: 'a-b', kind: 'volume-archive', time: day(5) }],
  ])('parses %s', (file, expected) => {
    expect(parseBackupName(file)).toMatchObject({ file, ...expected });
  });

  it.each(['nightly-etcd-20260105T020000Z.db.sha256', '.nightly-etcd.partial-abc', 'nightly-etcd-20261341T020000Z.db', 'nightly-etcd-20260105T020000.db', 'notes.txt', '-20260105T020000Z.db'])('ignores %s', (file) => {
    expect(parseBackupName(file)).toBeUndefined();
  });

  it('round-trips every schedule name and second', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,30}[a-z0-9])?$/), fc.integer({ min: 0, max: 4102444800 }), (schedule, seconds) => {
        const parsed = parseBackupName(backupFileName(schedule, seconds * 1000, 'etcd-snapshot'));
        expect(parsed).toMatchObject({ schedule, time: seconds * 1000 });
      }),
    );
  });
});

describe('planRetention', () => {
  const own = [1, 2, 3, 4, 5].map((d) => backupFileName('nightly', day(d), 'etcd-snapshot'));

  it('deletes the oldest of its own backups beyond keepLast, each with its sidecar, oldest first', () => {
    const files = [...own, ...own.map((f) => `${f}.sha256`)];
    const plan = planRetention({ files, schedule: 'nightly', keepLast: 3, justWritten: own[4]! });
    expect(plan.delete).toEqual([own[0], `${own[0]}.sha256`, own[1], `${own[1]}.sha256`]);
    expect(plan.keep).toEqual([own[4], own[3], own[2]]);
  });

  it('never touches another schedule, even one whose name extends this one', () => {
    const others = [backupFileName('nightly-extra', day(1), 'etcd-snapshot'), backupFileName('nightly.eu', day(1), 'volume-archive'), 'nightly.lock', 'README'];
    const plan = planRetention({ files: [...own, ...others], schedule: 'nightly', keepLast: 1, justWritten: own[4]! });
    expect(plan.delete).toEqual(own.slice(0, 4));
  });

  it('never deletes the backup just written, even when a clock step makes it look older than the others', () => {
    const justWritten = backupFileName('nightly', day(0), 'etcd-snapshot');
    const plan = planRetention({ files: [...own, justWritten], schedule: 'nightly', keepLast: 2, justWritten });
    expect(plan.delete).not.toContain(justWritten);
    expect(plan.keep).toEqual([justWritten, own[4]]);
  });

  it('keeps everything while there are no more than keepLast backups', () => {
    expect(planRetention({ files: own, schedule: 'nightly', keepLast: 5, justWritten: own[4]! }).delete).toEqual([]);
  });

  it.each([0, -1, 1.5, Number.NaN])('rejects keepLast %s', (keepLast) => {
    expect(() => planRetention({ files: own, schedule: 'nightly', keepLast, justWritten: own[4]! })).toThrow(/keepLast: must be an integer >= 1/);
  });
});
