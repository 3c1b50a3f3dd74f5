/**
 * The package's entry point (`import { BackupSchedule } from 'backupschedule-operator'`): what teams
 * need to write BackupSchedules in their own cdk8s apps, without the operator's runtime.
 */
export { BackupSchedule, type BackupScheduleProps } from './backup-schedule.ts';
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
} from '../api/index.ts';
export { GROUP_VERSION, KIND } from '../api/constants.ts';
export { SPEC_DEFAULTS } from '../api/defaults.ts';
export { validateBackupSchedule, type FieldError } from '../api/validate.ts';
export { previewCronJob, PREVIEW_UID, type PreviewOptions } from '../pure/preview.ts';
export { withServerDefaults, serverDefaultsOf, type ServerDefault } from '../pure/server-defaults.ts';
export type { CronJob, BuildOptions } from '../pure/cron-job.ts';
