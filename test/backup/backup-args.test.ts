import { describe, expect, it } from 'vitest';
import { BackupUsageError, parseBackupArgs } from '../../src/backup/backup-args.ts';

const env = { BACKUP_SCHEDULE_NAME: 'nightly-etcd', BACKUP_SCHEDULE_NAMESPACE: 'kubelings' };

describe('parseBackupArgs', () => {
  it('parses the etcd form buildCronJob emits', () => {
    expect(parseBackupArgs(['--source=etcd', '--etcd-endpoints=https://a:2379,https://b:2379', '--etcd-tls-dir=/etc/backup/etcd-tls', '--destination-dir=/backup/destination/nightly', '--keep-last=7'], env)).toEqual({
      kind: 'run',
      source: { kind: 'etcd', endpoints: ['https://a:2379', 'https://b:2379'], tlsDir: '/etc/backup/etcd-tls' },
      destinationDir: '/backup/destination/nightly',
      retention: { keepLast: 7 },
      schedule: 'nightly-etcd',
      namespace: 'kubelings',
    });
  });

  it('parses the pvc form and the tools', () => {
    expect(parseBackupArgs(['--source=pvc', '--source-dir=/backup/source', '--destination-dir=/d', '--keep-last=1'], env)).toMatchObject({ source: { kind: 'pvc', sourceDir: '/backup/source' }, retention: { keepLast: 1 } });
    expect(parseBackupArgs(['verify', '/d/x.db'], {})).toEqual({ kind: 'verify', file: '/d/x.db' });
    expect(parseBackupArgs(['list', '/d'], {})).toEqual({ kind: 'list', dir: '/d' });
    expect(parseBackupArgs(['--help'], {})).toEqual({ kind: 'help' });
  });

  it('parses the grandfather-father-son flags, alone or with --keep-last', () => {
    const base = ['--source=pvc', '--source-dir=/s', '--destination-dir=/d'];
    expect(parseBackupArgs([...base, '--keep-daily=7', '--keep-weekly=4', '--keep-monthly=12'], env)).toMatchObject({ retention: { keepDaily: 7, keepWeekly: 4, keepMonthly: 12 } });
    expect(parseBackupArgs([...base, '--keep-last=2', '--keep-monthly=1'], env)).toMatchObject({ retention: { keepLast: 2, keepMonthly: 1 } });
  });

  it.each([
    [['--source=etcd', '--destination-dir=/d', '--keep-last=7'], env, '--etcd-endpoints is required'],
    [['--source=etcd', '--etcd-endpoints=etcd:2379', '--destination-dir=/d', '--keep-last=7'], env, '--etcd-endpoints: "etcd:2379" is not an http:// or https:// host[:port] URL'],
    [['--source=nfs', '--destination-dir=/d', '--keep-last=7'], env, '--source: expected etcd or pvc, got "nfs"'],
    [['--source=pvc', '--source-dir=/s', '--destination-dir=/d', '--keep-last=1001'], env, '--keep-last: expected an integer 1-1000, got "1001"'],
    [['--source=pvc', '--source-dir=/s', '--destination-dir=/d'], env, '--keep-last is required'],
    [['--source=pvc', '--source-dir=/s', '--destination-dir=/d', '--keep-daily=0'], env, '--keep-daily: expected an integer 1-1000, got "0"'],
    [['--source=pvc', '--source-dir=/s', '--destination-dir=/d', '--keep-weekly=x'], env, '--keep-weekly: expected an integer 1-1000, got "x"'],
    [['--source=pvc', '--source-dir=/s', '--destination-dir=/d', '--keep-last=3', '--keep-monthly=1001'], env, '--keep-monthly: expected an integer 1-1000, got "1001"'],
    [['--source=pvc', '--source-dir=/s', '--keep-last=3'], env, '--destination-dir is required'],
    [['--source=pvc', '--source-dir=/s', '--destination-dir=/d', '--keep-last=3', '--etcd-tls-dir=/t'], env, '--etcd-endpoints/--etcd-tls-dir: only with --source=etcd'],
    [['--source=pvc', '--source-dir=/s', '--destination-dir=/d', '--keep-last=3'], {}, 'BACKUP_SCHEDULE_NAME: expected the BackupSchedule\'s name (a DNS-1123 subdomain), got ""'],
    [['--source=pvc', '--source-dir=/s', '--destination-dir=/d', '--keep-last=3'], { BACKUP_SCHEDULE_NAME: '../etc' }, 'BACKUP_SCHEDULE_NAME: expected the BackupSchedule\'s name (a DNS-1123 subdomain), got "../etc"'],
    [['--source=pvc', '--bogus'], env, "Unknown option '--bogus'"],
    [['verify'], {}, 'backup verify: expected exactly one file argument'],
  ] as const)('rejects %j with a message naming the flag', (argv, environment, message) => {
    expect(() => parseBackupArgs(argv, environment)).toThrow(BackupUsageError);
    expect(() => parseBackupArgs(argv, environment)).toThrow(message);
  });
});
