/** The backup runner: the `backup` subcommand of the project image (README "Backup container contract"). */
export { runBackupCli } from './main.ts';
export { parseBackupArgs, BackupUsageError, BACKUP_USAGE, type BackupCommand, type BackupSource } from './backup-args.ts';
export { runBackup, EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INCOMPLETE } from './run-backup.ts';
export { planRetention, retentionPolicyProblems, isoWeek, directoryCandidates, DEFAULT_MAX_FUTURE_SKEW_MS, type RetentionPolicy, type RetentionInput, type RetentionPlan, type RetentionCandidate, type IgnoredBackup } from './retention.ts';
export { quickCheckBackup, directoryRetentionCandidates } from './retention-candidates.ts';
export { backupFileName, parseBackupName, type BackupName, type BackupKind } from './backup-names.ts';
export { formatStamp } from '../pure/backup-stamp.ts';
export { verifySnapshot, SnapshotInvalidError, type SnapshotReport } from './snapshot-verify.ts';
export { verifyArchive, ArchiveInvalidError, type ArchiveReport } from './archive-verify.ts';
export { verifyBackupFile, listBackups, formatList, type Verification, type ListedBackup } from './backup-tools.ts';
export { runObjectStoreBackup } from './object-store/s3-run.ts';
export { objectBackupName, parseObjectBackupName, type ObjectBackupName, type Compression } from './object-store/object-names.ts';
export { verifyObject, fetchObject, listObjectsTable, type ObjectVerification } from './object-store/s3-tools.ts';
export type { ObjectStoreTarget } from './object-store/object-store-args.ts';
