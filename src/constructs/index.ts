/**
 * The package's entry point (`import { BackupSchedule } from 'backupschedule-operator'`, or `require`):
 * what teams need to write BackupSchedules and Restores in their own cdk8s apps, in either served version, without
 * the operator's runtime. Every type it exports is declared in this package (no optional dependency).
 */
export { BackupSchedule, type BackupScheduleProps, type BackupScheduleVersions } from './backup-schedule.ts';
export { Restore, previewRestoreJob, type Job, type RestoreProps, type RestorePreviewOptions, type RestoreResolvedSource } from './restore.ts';
export type { Restore as RestoreManifest, RestoreSpec, RestoreSource, RestoreTarget, RestoreTargetClaim, RestoreDecryption, RestoreStatus, RestoredBackup } from '../../imports/restore.ts';
export { validateRestore } from '../api/validate.ts';
export type {
  BackupSchedule as BackupScheduleManifest,
  BackupScheduleSpec,
  BackupSource,
  EtcdSource,
  PersistentVolumeClaimSource,
  BackupDestination,
  PersistentVolumeClaimDestination,
  Retention,
  BackupResources,
  ResourceList,
  AnyBackupSchedule,
  /** The `kubelings.dev/v1` types as a namespace: `v1.BackupScheduleSpec`, `v1.Retention`, `v1.BackupSchedule`. */
  v1,
} from '../api/index.ts';
export { GROUP_VERSION, GROUP_VERSION_V1, KIND, SERVED_GROUP_VERSIONS, type ServedGroupVersion } from '../api/constants.ts';
export { SPEC_DEFAULTS } from '../api/defaults.ts';
export { validateAnyVersion, validateBackupSchedule, validateBackupScheduleV1, isV1, type FieldError } from '../api/validate.ts';
export { toV1, toV1alpha1, ConversionError, RETENTION_ANNOTATION } from '../conversion/backupschedule-conversion.ts';
export { previewCronJob, PREVIEW_UID, type PreviewOptions, withServerDefaults, serverDefaultsOf, type ServerDefault } from './preview.ts';
export type {
  CronJob,
  CronJobSpec,
  CronJobObjectMeta,
  CronJobOwnerReference,
  JobTemplateSpec,
  JobSpec,
  PodFailurePolicy,
  PodFailurePolicyRule,
  PodTemplateSpec,
  PodSpec,
  PodSecurityContext,
  Container,
  ResourceRequirements,
  SecurityContext,
  VolumeMount,
  Volume,
} from './cron-job-types.ts';
/** @deprecated Use {@link PreviewOptions} (the same options; `namespace` applies to previews only). */
export type { PreviewOptions as BuildOptions } from './preview.ts';
