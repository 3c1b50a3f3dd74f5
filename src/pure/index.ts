/** Pure functions from a BackupSchedule to the objects the operator owns. */
export { buildCronJob, DEFAULT_BACKUP_RESOURCES, type BuildOptions, type CronJob } from './cron-job.ts';
export { childName, childNamespace, ownerReference } from './owner-reference.ts';
export { childNameFor, labelValueFor, truncateWithHash, MAX_CHILD_NAME_LENGTH, MAX_LABEL_VALUE_LENGTH } from './names.ts';
export {
  childLabels,
  LABEL_BACKUP_SCHEDULE,
  LABEL_COMPONENT,
  LABEL_INSTANCE,
  LABEL_MANAGED_BY,
  LABEL_NAME,
  LABEL_PART_OF,
  OPERATOR_NAME,
} from './labels.ts';
export { DEFAULT_BACKUP_IMAGE, DEFAULT_IMAGE, OPERATOR_VERSION } from './image.ts';
export * from './backup-contract.ts';
