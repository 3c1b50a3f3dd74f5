import type { AnyBackupSchedule } from '../api/index.ts';
import { GROUP_VERSION, KIND } from '../api/index.ts';
import type { OwnerReference } from '../kube/object.ts';
import { childNameFor } from './names.ts';

function requireMeta(schedule: AnyBackupSchedule, field: 'name' | 'namespace' | 'uid'): string {
  const value = schedule.metadata?.[field];
  if (typeof value !== 'string' || value === '') {
    throw new Error(`BackupSchedule metadata.${field} is required to build its CronJob (got ${JSON.stringify(value)})`);
  }
  return value;
}

/** The child CronJob's name (≤ 52 characters; long names are shortened with a sha256 suffix). */
export function childName(schedule: AnyBackupSchedule): string {
  return childNameFor(requireMeta(schedule, 'name'));
}

/** The owner's namespace; the child lives in the same one (ownerReferences cannot cross namespaces). */
export function childNamespace(schedule: AnyBackupSchedule): string {
  return requireMeta(schedule, 'namespace');
}

/**
 * The controller ownerReference that makes the garbage collector delete the CronJob with its
 * BackupSchedule. `blockOwnerDeletion` needs `update` on `backupschedules/finalizers` (operator-sdk#4020).
 * Its apiVersion is the schedule's own. A child made from v1alpha1 and one made from v1 name the same
 * owner ({@link sameOwner} compares them so, and an upgrade rewrites no child); the garbage collector
 * reads an owner through the version its reference names, so that version must stay served while a
 * child names it (README "Upgrading").
 */
export function ownerReference(schedule: AnyBackupSchedule): OwnerReference {
  return {
    apiVersion: schedule.apiVersion ?? GROUP_VERSION,
    kind: KIND,
    name: requireMeta(schedule, 'name'),
    uid: requireMeta(schedule, 'uid'),
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Name of the owner BackupSchedule (throws when missing). */
export function ownerName(schedule: AnyBackupSchedule): string {
  return requireMeta(schedule, 'name');
}

/** The API group of an `apiVersion` (`''` for the core group). */
const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

/**
 * Whether two ownerReferences name the same owner in the same role: equal uid, name, kind, group and
 * flags. The version is not compared: it only says through which served version the owner was read.
 */
export function sameOwner(a: OwnerReference, b: OwnerReference): boolean {
  return (
    a.uid === b.uid &&
    groupOf(a.apiVersion) === groupOf(b.apiVersion) &&
    a.kind === b.kind &&
    a.name === b.name &&
    (a.controller ?? false) === (b.controller ?? false) &&
    (a.blockOwnerDeletion ?? false) === (b.blockOwnerDeletion ?? false)
  );
}
