/**
 * Command line of `backup restore` (docs/restore.md):
 *
 *   backup restore --from=<dir|s3://bucket[/prefix]> [s3 flags] --backup=<name|latest> --target-dir=<dir> [--schedule=<name>]
 *                  [--identity=<file>] [--overwrite] [--allow-incomplete]
 *
 * A mistake is a {@link BackupUsageError} naming the flag; the process exits 2.
 */
import { BackupUsageError } from '../backup-args.ts';
import { parseBackupFlags } from '../backup-flags.ts';
import { parseS3Url } from '../object-store/s3-location.ts';
import { S3_FLAG_OPTIONS, s3OptionsFrom } from '../object-store/object-store-args.ts';
import type { RestoreCommand } from './run-restore.ts';

/** Usage text of `backup restore`. */
export const RESTORE_USAGE = `Usage:
  backup restore --from=<dir|s3://BUCKET[/PREFIX]> [<s3>] --backup=<name|latest> --target-dir=<dir> [--schedule=<name>]
                 [--identity=<file>] [--overwrite] [--allow-incomplete]
    --backup      a backup file name in <dir> (<schedule>-<yyyymmddThhmmssZ>.db|.tar.gz), or latest: the newest
                  one that verifies (of --schedule's backups when given; never .incomplete without --allow-incomplete)
    --identity    an age identity file, for encrypted (.age) objects; backups in a directory are not encrypted
    <s3>          [--s3-endpoint=URL] [--s3-region=R] [--s3-force-path-style] [--s3-ca-file=PEM] [--s3-allow-http];
                  credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN. The object is
                  downloaded, decrypted, decompressed and checked into a hidden file in --target-dir first
    --target-dir  a volume archive is extracted there (an empty directory unless --overwrite); an etcd snapshot is
                  written there as <name>.db, the file etcdutl snapshot restore takes
  The backup's .sha256 sidecar and its format are verified before anything is written.
  Exit codes: 0 restored; 1 failed while writing (the target may hold part of the backup); 2 usage;
  5 refused, nothing written (no such backup or none verifies, an unsafe archive path, target not empty).
`;

/** Parses the arguments after `backup restore`. */
export function parseRestoreArgs(argv: readonly string[]): RestoreCommand {
  const values = parseBackupFlags(argv, {
    from: { type: 'string' },
    backup: { type: 'string' },
    'target-dir': { type: 'string' },
    schedule: { type: 'string' },
    overwrite: { type: 'boolean' },
    'allow-incomplete': { type: 'boolean' },
    identity: { type: 'string' },
    ...S3_FLAG_OPTIONS,
  }, BackupUsageError);
  const required = (flag: 'from' | 'backup' | 'target-dir'): string => {
    const value = values[flag];
    if (value === undefined || value === '') throw new BackupUsageError(`--${flag} is required`);
    return value;
  };
  const from = required('from');
  const backup = required('backup');
  if (backup.includes('/')) throw new BackupUsageError(`--backup: expected a file name in --from or latest, got the path ${JSON.stringify(backup)}`);
  if (values.schedule === '') throw new BackupUsageError('--schedule: empty');
  if (values.identity === '') throw new BackupUsageError('--identity: empty');
  const common = { kind: 'restore', from, backup, schedule: values.schedule, targetDir: required('target-dir'), overwrite: values.overwrite === true, allowIncomplete: values['allow-incomplete'] === true } as const;
  if (from.startsWith('s3://')) {
    let s3;
    try {
      parseS3Url(from, '--from');
      s3 = s3OptionsFrom(values);
    } catch (err) {
      throw new BackupUsageError((err as Error).message);
    }
    return { ...common, objectStore: { url: from, s3, identityFile: values.identity } };
  }
  const s3Flag = Object.keys(S3_FLAG_OPTIONS).find((flag) => values[flag as keyof typeof values] !== undefined);
  if (s3Flag !== undefined) throw new BackupUsageError(`--${s3Flag}: only with an s3:// --from`);
  return common;
}
