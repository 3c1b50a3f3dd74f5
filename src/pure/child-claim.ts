/**
 * Whose CronJob is it: the decision reconcile takes about an existing CronJob that carries the child's
 * name, from the CronJob's metadata alone (Kubernetes' `ControllerRefManager.ClaimObject` rules, reduced
 * to one deterministic name):
 *
 * - controlled by this schedule (same uid) → ours: heal it;
 * - no controller, and our `managed-by` label and the `kubelings.dev/backup-schedule` label naming this
 *   schedule → an orphan of ours (its owner was deleted with `propagationPolicy: Orphan`, or the owner
 *   reference was removed by hand): adopt it, by adding our controller reference in the heal. Never while
 *   the schedule is being deleted (the ControllerRefManager's rule: the adoption would race the garbage
 *   collector);
 * - controlled by a BackupSchedule of the same name but another uid → a previous incarnation of this
 *   schedule, deleted and not yet garbage-collected: a conflict that resolves by itself;
 * - anything else (another controller, or no controller without our labels) → a conflict: the CronJob
 *   is left alone.
 */
import { API_GROUP, KIND } from '../api/index.ts';
import { controllerOf, type KubeObject, type OwnerReference } from '../kube/object.ts';
import { LABEL_BACKUP_SCHEDULE, LABEL_MANAGED_BY, OPERATOR_NAME } from './labels.ts';
import { labelValueFor } from './names.ts';

/** The parts of a BackupSchedule {@link claimChild} reads. */
export interface ClaimingSchedule {
  readonly metadata: { readonly name?: string; readonly uid?: string; readonly deletionTimestamp?: string };
}

/** What to do with a CronJob that carries the child's name. */
export type ChildClaim =
  | { readonly kind: 'owned' }
  | { readonly kind: 'adopt' }
  | { readonly kind: 'conflict'; readonly controller: OwnerReference | undefined; readonly previousIncarnation: boolean };

/** Whether an owner reference points at a BackupSchedule (any version of our group). */
export function isBackupScheduleRef(ref: Pick<OwnerReference, 'apiVersion' | 'kind'>): boolean {
  return ref.kind === KIND && ref.apiVersion.split('/')[0] === API_GROUP;
}

/** Decides, from `cronJob`'s metadata, whether `schedule` owns, adopts, or must leave it alone (see the module doc). */
export function claimChild(schedule: ClaimingSchedule, cronJob: Pick<KubeObject, 'metadata'>): ChildClaim {
  const controller = controllerOf(cronJob.metadata);
  if (controller && controller.uid === schedule.metadata.uid) return { kind: 'owned' };
  if (!controller) {
    const labels = cronJob.metadata.labels ?? {};
    const ours = labels[LABEL_MANAGED_BY] === OPERATOR_NAME && labels[LABEL_BACKUP_SCHEDULE] === labelValueFor(schedule.metadata.name ?? '');
    if (ours && !schedule.metadata.deletionTimestamp) return { kind: 'adopt' };
  }
  const previousIncarnation = controller !== undefined && isBackupScheduleRef(controller) && controller.name === schedule.metadata.name;
  return { kind: 'conflict', controller, previousIncarnation };
}
