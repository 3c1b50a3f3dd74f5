/**
 * The contract between a Restore's Job (buildRestoreJob) and the runner's `backup restore`
 * (src/backup/restore/): the arguments, mount paths and exit codes both sides use.
 *
 *   backup restore --from=<dir|s3://bucket[/prefix]> [s3 flags] --backup=<name|latest>
 *                  --target-dir=<dir> [--schedule=<name>] [--identity=<file>] [--overwrite] [--allow-incomplete]
 *
 * Exit code 0 = restored; 1 = failed while writing (the target may hold part of the backup); 2 = usage;
 * 5 = refused before anything was written (no such backup or none verifies, an unsafe archive, the
 * target not empty). None is retried: the Job's backoffLimit is 0.
 */

/** Arguments that select the restore in the project image. */
export const RESTORE_SUBCOMMAND: readonly string[] = ['backup', 'restore'];
/** Name of the restore container. */
export const RESTORE_CONTAINER_NAME = 'restore';
/** Mount path of the claim the backups are read from (read-only). */
export const RESTORE_FROM_MOUNT_PATH = '/backup/from';
/** Mount path of the claim restored into. */
export const RESTORE_TARGET_MOUNT_PATH = '/backup/target';
/** Mount path of the age identity Secret (read-only; only its identity key is projected). */
export const AGE_IDENTITY_MOUNT_PATH = '/etc/backup/age-identity';
/** The key of the identity Secret holding the age identity (AGE-SECRET-KEY-1…). */
export const AGE_IDENTITY_KEY = 'identity';
/** The runner's flags of a restore. */
export const RESTORE_FLAGS = {
  from: '--from',
  backup: '--backup',
  targetDir: '--target-dir',
  schedule: '--schedule',
  identity: '--identity',
  overwrite: '--overwrite',
  allowIncomplete: '--allow-incomplete',
} as const;
/** Exit code: refused before anything was written. */
export const EXIT_RESTORE_REFUSED = 5;
