import type { BackupSchedule } from '../api/index.ts';
import { GROUP_VERSION, KIND } from '../api/index.ts';
import type { OwnerReference } from '../kube/object.ts';
import { childNameFor } from './names.ts';

function requireMeta(schedule: BackupSchedule, field: 'name' | 'namespace' | 'uid'): string {
  const value = schedule.metadata?.[field];
  if (typeof value !== 'string' || value === '') {
    throw new Error(`BackupSchedule metadata.${field} is required to build its CronJob (got ${JSON.stringify(value)})`);
  }
  return value;
}

/** The child CronJob's name (≤ 52 characters; long names are shortened with a sha256 suffix). */
export function childName(schedule: BackupSchedule): string {
  return childNameFor(requireMeta(schedule, 'name'));
}

/** The owner's namespace; the child lives in the same one (ownerReferences cannot cross namespaces). */
export function childNamespace(schedule: BackupSchedule): string {
  return requireMeta(schedule, 'namespace');
}

/**
 * The controller ownerReference that makes the garbage collector delete the CronJob with its
 * BackupSchedule. `blockOwnerDeletion` needs `update` on `backupschedules/finalizers` (operator-sdk#4020).
 */
export function ownerReference(schedule: BackupSchedule): OwnerReference {
  return {
    apiVersion: GROUP_VERSION,
    kind: KIND,
    name: requireMeta(schedule, 'name'),
    uid: requireMeta(schedule, 'uid'),
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Name of the owner BackupSchedule (throws when missing). */
export function ownerName(schedule: BackupSchedule): string {
  return requireMeta(schedule, 'name');
}
