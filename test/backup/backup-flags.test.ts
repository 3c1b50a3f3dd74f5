import { describe, expect, it } from 'vitest';
import { BACKUP_USAGE, BackupUsageError, parseBackupArgs } from '../../src/backup/backup-args.ts';

const env = { BACKUP_SCHEDULE_NAME: 'nightly', BACKUP_SCHEDULE_NAMESPACE: 'ns' };
const base = ['--source=pvc', '--source-dir=/s', '--destination-dir=/d'];

describe('backup flags given twice', () => {
  it('rejects a repeated flag, naming it, whatever the spelling (--flag=v, --flag v)', () => {
    expect(() => parseBackupArgs([...base, '--keep-last=30', '--keep-last=3'], env)).toThrow(new BackupUsageError('--keep-last: given more than once; give it once'));
    expect(() => parseBackupArgs([...base, '--keep-last=3', '--destination-dir', '/e'], env)).toThrow(/--destination-dir: given more than once/);
    expect(() => parseBackupArgs(['--source=etcd', '--source=pvc', '--source-dir=/s', '--destination-dir=/d', '--keep-last=1'], env)).toThrow(/--source: given more than once/);
  });

  it('lets a flag meant to repeat repeat (--age-recipient, one per recipient)', () => {
    const run = ['--source=pvc', '--source-dir=/s', '--destination-url=s3://bucket/p', '--keep-last=1', '--age-recipient=age1aaa', '--age-recipient=age1bbb'];
    expect(() => parseBackupArgs(run, env)).not.toThrow(/given more than once/);
  });

  it('still reports an unknown flag in its own words, and accepts each flag once', () => {
    expect(() => parseBackupArgs([...base, '--keep-last=1', '--bogus'], env)).toThrow(/Unknown option '--bogus'/);
    expect(parseBackupArgs([...base, '--keep-last=1', '--keep-daily=7'], env)).toMatchObject({ retention: { keepLast: 1, keepDaily: 7 } });
  });
});

describe('backup usage', () => {
  it('lists every exit code, 4 included', () => {
    expect(BACKUP_USAGE).toMatch(/4 written and verified, but pruning failed/);
  });
});
