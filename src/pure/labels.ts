import { labelValueFor } from './names.ts';

/** `app.kubernetes.io/name` (recommended label). */
export const LABEL_NAME = 'app.kubernetes.io/name';
/** `app.kubernetes.io/instance`: the BackupSchedule's name (shortened with a hash when > 63 chars). */
export const LABEL_INSTANCE = 'app.kubernetes.io/instance';
/** `app.kubernetes.io/component`. */
export const LABEL_COMPONENT = 'app.kubernetes.io/component';
/** `app.kubernetes.io/managed-by`. */
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
/** `app.kubernetes.io/part-of`. */
export const LABEL_PART_OF = 'app.kubernetes.io/part-of';
/** Names the owning BackupSchedule (shortened with a hash when > 63 chars); select children with it. */
export const LABEL_BACKUP_SCHEDULE = 'kubelings.dev/backup-schedule';

/** Value of `app.kubernetes.io/managed-by` and `part-of` on everything the operator creates. */
export const OPERATOR_NAME = 'backupschedule-operator';

/** The labels of a child CronJob, its Job template and its Pod template, in a fixed order. */
export function childLabels(scheduleName: string): Record<string, string> {
  const owner = labelValueFor(scheduleName);
  return {
    [LABEL_NAME]: 'backup',
    [LABEL_INSTANCE]: owner,
    [LABEL_COMPONENT]: 'backup-job',
    [LABEL_MANAGED_BY]: OPERATOR_NAME,
    [LABEL_PART_OF]: OPERATOR_NAME,
    [LABEL_BACKUP_SCHEDULE]: owner,
  };
}
