/**
 * `backup restore`'s command line: each mistake is a usage error naming the flag (exit 2 in the
 * process), a directory or an s3:// source parses into the restore it names.
 */
import { describe, expect, it } from 'vitest';
import { BackupUsageError } from '../../../src/backup/backup-args.ts';
import { parseRestoreArgs } from '../../../src/backup/restore/restore-args.ts';

describe('parseRestoreArgs', () => {
  it('parses a directory source', () => {
    expect(parseRestoreArgs(['--from=/b', '--backup=latest', '--target-dir=/t', '--schedule=db', '--overwrite', '--allow-incomplete'])).toEqual({ kind: 'restore', from: '/b', backup: 'latest', schedule: 'db', targetDir: '/t', overwrite: true, allowIncomplete: true });
  });

  it('parses an object store source with its flags and identity', () => {
    const parsed = parseRestoreArgs(['--from=s3://bkt/prod', '--s3-endpoint=https://minio:9000', '--s3-force-path-style', '--backup=latest', '--target-dir=/t', '--identity=/k']);
    expect(parsed).toMatchObject({ from: 's3://bkt/prod', objectStore: { url: 's3://bkt/prod', identityFile: '/k', s3: { endpoint: 'https://minio:9000', forcePathStyle: true } } });
  });

  it.each([
    [['--backup=latest', '--target-dir=/t'], '--from is required'],
    [['--from=/b', '--target-dir=/t'], '--backup is required'],
    [['--from=/b', '--backup=latest'], '--target-dir is required'],
    [['--from=/b', '--backup=../x/y.db', '--target-dir=/t'], '--backup: expected a file name in --from or latest, got the path "../x/y.db"'],
    [['--from=/b', '--backup=latest', '--target-dir=/t', '--s3-region=eu-west-1'], '--s3-region: only with an s3:// --from'],
    [['--from=s3://A_B', '--backup=latest', '--target-dir=/t'], 'is not an S3 bucket name'],
    [['--from=/b', '--backup=latest', '--target-dir=/t', '--from=/c'], '--from: given more than once'],
    [['--from=/b', '--backup=latest', '--target-dir=/t', '--identity='], '--identity: empty'],
  ])('%j is a usage error: %s', (argv, message) => {
    expect(() => parseRestoreArgs(argv)).toThrow(BackupUsageError);
    expect(() => parseRestoreArgs(argv)).toThrow(message);
  });
});
