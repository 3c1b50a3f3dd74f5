/**
 * Command line of `backup restore` (docs/restore.md):
 *
 *   backup restore --from=<dir> --backup=<name|latest> --target-dir=<dir> [--schedule=<name>]
 *                  [--identity=<file>] [--overwrite] [--allow-incomplete]
 *
 * A mistake is a {@link BackupUsageError} naming the flag; the process exits 2.
 */
import { BackupUsageError } from '../backup-args.ts';
import { parseBackupFlags } from '../backup-flags.ts';
import { S3_FLAG_OPTIONS } from '../object-store/object-store-args.ts';
import type { RestoreCommand } from './run-restore.ts';

/** Usage text of `backup restore`. */
export const RESTORE_USAGE = `Usage:
  backup restore --from=<dir> --backup=<name|latest> --target-dir=<dir> [--schedule=<name>] [--identity=<file>] [--overwrite] [--allow-incomplete]
    --backup      a backup file name in <dir> (<schedule>-<yyyymmddThhmmssZ>.db|.tar.gz), or latest: the newest
                  one that verifies (of --schedule's backups when given; never .incomplete without --allow-incomplete)
    --identity    an age identity file, for encrypted (.age) backups; backups in a directory are not encrypted
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
    // Accepted so a Job's object-store source gets the message below, not "unknown option".
    ...S3_FLAG_OPTIONS,
  }, BackupUsageError);
  const required = (flag: 'from' | 'backup' | 'target-dir'): string => {
    const value = values[flag];
    if (value === undefined || value === '') throw new BackupUsageError(`--${flag} is required`);
    return value;
  };
  const from = required('from');
  if (from.startsWith('s3://')) throw new BackupUsageError('--from: restoring from an object store (s3://) is not available in this runner yet; fetch the backup with `backup fetch` and restore from its directory');
  const backup = required('backup');
  if (backup.includes('/')) throw new BackupUsageError(`--backup: expected a file name in --from or latest, got the path ${JSON.stringify(backup)}`);
  if (values.schedule === '') throw new BackupUsageError('--schedule: empty');
  if (values.identity === '') throw new BackupUsageError('--identity: empty');
  const s3Flag = Object.keys(S3_FLAG_OPTIONS).find((flag) => values[flag as keyof typeof values] !== undefined);
  if (s3Flag !== undefined) throw new BackupUsageError(`--${s3Flag}: only with an s3:// --from`);
  return { kind: 'restore', from, backup, schedule: values.schedule, targetDir: required('target-dir'), overwrite: values.overwrite === true, allowIncomplete: values['allow-incomplete'] === true };
}
