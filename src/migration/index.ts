/** Storage-version migration of custom resources: rewrite every object in the storage version, then trim `status.storedVersions`. */
export { migrateStorage, skipFix, type MigrationResult, type SkippedObject, type StorageMigrationOptions } from './storage-migrator.ts';
export { MigrationRefusedError, planMigration, readMigrationTarget, storageVersionHash, type MigrationPlan, type MigrationTarget } from './migration-target.ts';
export type { MigrationCounts, ObjectFailure, ObjectSkip } from './migration-progress.ts';
export type { RetryPolicy } from './retry-policy.ts';
export { storageMigrationRules, type MigratedResource, type MigrationPolicyRule } from './migration-rbac.ts';
export { runMigrateStorageCli, MIGRATE_EXIT, type MigrateStorageCliOptions } from './migrate-storage-command.ts';
export { parseMigrateStorageArgs, migrateStorageUsage, MigrateStorageUsageError, type MigrateStorageCommand, type MigrateStorageOptions } from './migrate-storage-args.ts';
