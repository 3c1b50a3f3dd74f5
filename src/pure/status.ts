/**
 * The BackupSchedule status as a pure function of the schedule, its child CronJob and what reconcile
 * found. Being pure and deterministic is what keeps status writes rare: the reconciler writes only when
 * {@link statusEqual} says the computed status differs from the stored one, so a converged schedule (or a
 * restarted controller looking at one) computes exactly the stored status and writes nothing
 * (controller-runtime#1711: every status write re-triggers the watch).
 *
 * Conditions follow the Kubernetes API conventions (`metav1.Condition`): `lastTransitionTime` changes only
 * when `status` changes, and `observedGeneration` says which spec the condition describes.
 */
import { isDeepStrictEqual } from 'node:util';
import type { BackupScheduleStatus, Condition, FieldError } from '../api/index.ts';
import { MAX_ACTIVE_JOBS, MAX_CONDITIONS, MAX_JOB_NAME_LENGTH } from '../api/schema.ts';
import type { KubeObject, OwnerReference } from '../kube/object.ts';
import { backupOutcome, LAST_BACKUP_SUCCEEDED, type JobView } from './backup-runs.ts';

/** The status this controller writes, as the schema in src/api defines it. */
export type ScheduleStatus = BackupScheduleStatus;
export type { Condition, FieldError as SpecFieldError };

/** The condition type this controller owns. */
export const READY = 'Ready';

/** Reasons of the `Ready` condition. */
export const ReadyReason = {
  /** The child CronJob was created for this schedule and matches it. */
  Created: 'Created',
  /** The child CronJob matches a new generation of the spec. */
  Updated: 'Updated',
  /** The child CronJob matches the spec (again). */
  Ready: 'Ready',
  /** The spec is invalid (it slipped past admission); no child is created or changed. */
  InvalidSpec: 'InvalidSpec',
  /** A CronJob with the child's name exists and is not controlled by this schedule; it is left alone. */
  ChildNameConflict: 'ChildNameConflict',
  /** `spec.image` is not in the operator's allow-list (`--allowed-backup-images`); no child is created or changed. */
  ImageNotAllowed: 'ImageNotAllowed',
  /** `spec.destination.objectStore.endpoint` is not in the operator's allow-list (`--allowed-backup-endpoints`); no child is created or changed. */
  EndpointNotAllowed: 'EndpointNotAllowed',
  /** The API server refused to create or update the child (403, 422…): its message is the condition's. */
  ChildRejected: 'ChildRejected',
  /** The API server accepted the child write but did not keep some fields (an older server, a mutating webhook). */
  ChildNotPersisted: 'ChildNotPersisted',
  /** Fields of the child the controller restored keep being changed back by another writer. */
  DriftRecurring: 'DriftRecurring',
} as const;

/** What reconcile found, the input of {@link computeStatus} beyond the objects themselves. */
export type StatusOutcome =
  | { readonly kind: 'InSync' }
  | { readonly kind: 'InvalidSpec'; readonly errors: readonly FieldError[] }
  | {
      readonly kind: 'ChildNameConflict';
      readonly childName: string;
      readonly controller: OwnerReference | undefined;
      /** The controller is an earlier BackupSchedule of the same name (another uid), deleted and not yet garbage-collected. */
      readonly previousIncarnation: boolean;
    }
  | { readonly kind: 'ImageNotAllowed'; readonly image: string; readonly flag: string; readonly allowed: readonly string[] }
  | { readonly kind: 'EndpointNotAllowed'; readonly endpoint: string; readonly flag: string; readonly allowed: readonly string[] }
  | { readonly kind: 'ChildRejected'; readonly verb: 'create' | 'update'; readonly childName: string; readonly code: number; readonly message: string }
  | { readonly kind: 'ChildNotPersisted'; readonly childName: string; readonly fields: readonly string[]; readonly cause: string }
  | { readonly kind: 'DriftRecurring'; readonly childName: string; readonly fields: readonly string[] };

/** `text` cut to `max` characters (a 422 can list many causes; the condition's message has a bound). */
function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `a, b and 3 more`: field lists in messages stay short. */
export function listFields(fields: readonly string[], max = 5): string {
  return fields.length > max ? `${fields.slice(0, max).join(', ')} and ${fields.length - max} more` : fields.join(', ');
}

/** The parts of a BackupSchedule {@link computeStatus} reads. */
export interface StatusSubject {
  readonly metadata: { readonly generation?: number };
  readonly status?: ScheduleStatus;
}

interface CronJobStatusView {
  active?: unknown[];
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
}

/** Kubernetes `metav1.Time`: RFC 3339 in UTC with second precision. */
export function formatTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function childStatus(child: KubeObject | undefined): CronJobStatusView {
  const status = child?.status;
  return typeof status === 'object' && status !== null ? (status as CronJobStatusView) : {};
}

/**
 * Names of the running Jobs, sorted so that the CronJob controller's ordering never causes a write,
 * within the schema's bounds (a set of at most MAX_ACTIVE_JOBS names): the CronJob's status may list
 * more Jobs (concurrencyPolicy Allow) or, written by someone else, repeat or overlong names, and a
 * status outside the bounds could never be written. The first names kept are the oldest Jobs (the
 * CronJob controller names them <cronjob>-<scheduled minute>).
 */
function activeJobNames(active: unknown[] | undefined): string[] {
  const names = (active ?? []).map((ref) => (typeof ref === 'object' && ref !== null ? (ref as { name?: unknown }).name : undefined));
  const valid = names.filter((n): n is string => typeof n === 'string' && n.length <= MAX_JOB_NAME_LENGTH);
  return [...new Set(valid)].sort().slice(0, MAX_ACTIVE_JOBS);
}

function readyCondition(
  schedule: StatusSubject,
  outcome: StatusOutcome,
  child: KubeObject | undefined,
): Pick<Condition, 'status' | 'reason' | 'message'> {
  const previous = schedule.status?.conditions?.find((c) => c.type === READY);
  switch (outcome.kind) {
    case 'InvalidSpec':
      return {
        status: 'False',
        reason: ReadyReason.InvalidSpec,
        // FieldError messages start with the field's path already.
        message: `invalid spec: ${outcome.errors.map((e) => e.message).join('; ')}`,
      };
    case 'ChildNameConflict': {
      const { controller } = outcome;
      if (controller && outcome.previousIncarnation) {
        return {
          status: 'False',
          reason: ReadyReason.ChildNameConflict,
          message:
            `CronJob "${outcome.childName}" still belongs to a previous BackupSchedule "${controller.name}" (uid ${controller.uid}), deleted but not yet garbage-collected; ` +
            'this schedule creates its own CronJob once the garbage collector has deleted it (checked again periodically)',
        };
      }
      const by = controller ? `controlled by ${controller.kind} "${controller.name}" (uid ${controller.uid})` : 'not controlled by any owner';
      return {
        status: 'False',
        reason: ReadyReason.ChildNameConflict,
        message: `CronJob "${outcome.childName}" already exists and is ${by}; it is left alone: rename or delete it`,
      };
    }
    case 'ImageNotAllowed':
      return {
        status: 'False',
        reason: ReadyReason.ImageNotAllowed,
        message:
          `spec.image: "${outcome.image}" is not allowed by the operator (controller flag ${outcome.flag}: ` +
          `${outcome.allowed.map((p) => `"${p}"`).join(', ')}); no CronJob is created or updated (one already running a disallowed image is suspended): remove spec.image or ask the operator's administrators to allow it`,
      };
    case 'EndpointNotAllowed':
      return {
        status: 'False',
        reason: ReadyReason.EndpointNotAllowed,
        message:
          `spec.destination.objectStore.endpoint: "${outcome.endpoint}" is not allowed by the operator (controller flag ${outcome.flag}: ` +
          `${outcome.allowed.length === 0 ? 'unset, so only AWS S3 (no endpoint) is' : outcome.allowed.map((p) => `"${p}"`).join(', ')}); no CronJob is created or updated (one already running is suspended): ` +
          'leave endpoint out for AWS S3 or ask the operator\'s administrators to allow it',
      };
    case 'ChildRejected':
      return {
        status: 'False',
        reason: ReadyReason.ChildRejected,
        // The API's message names the object, the field or the missing permission; it is the useful part.
        message: `the API server rejected the ${outcome.verb} of CronJob "${outcome.childName}" (HTTP ${outcome.code}): ${clip(outcome.message, 4096)}; retried with backoff and whenever the schedule or the CronJob changes`,
      };
    case 'ChildNotPersisted':
      return {
        status: 'False',
        reason: ReadyReason.ChildNotPersisted,
        message:
          `the API server accepted CronJob "${outcome.childName}" but did not keep ${listFields(outcome.fields)}: ${outcome.cause}; ` +
          'not sent again for this generation until the schedule or the CronJob changes (retried with backoff)',
      };
    case 'DriftRecurring':
      return {
        status: 'False',
        reason: ReadyReason.DriftRecurring,
        message:
          `${listFields(outcome.fields)} of CronJob "${outcome.childName}" keep being changed back after the controller restores them: ` +
          'another writer (a second controller with a different --backup-image, a GitOps tool, an admission webhook) fights over them; restoring with backoff',
      };
    case 'InSync': {
      const name = child?.metadata.name ?? '';
      const generation = schedule.metadata.generation;
      if (previous?.status === 'True' && previous.observedGeneration === generation) {
        return { status: 'True', reason: previous.reason, message: previous.message };
      }
      if (schedule.status?.cronJobName === undefined) {
        return { status: 'True', reason: ReadyReason.Created, message: `CronJob "${name}" created` };
      }
      if (previous?.observedGeneration !== generation) {
        return { status: 'True', reason: ReadyReason.Updated, message: `CronJob "${name}" matches generation ${generation ?? 0}` };
      }
      return { status: 'True', reason: ReadyReason.Ready, message: `CronJob "${name}" matches the spec` };
    }
  }
}

/**
 * The status the schedule should have, given its child (only when the child is controlled by this
 * schedule) and the reconcile outcome. `now` (ms since the epoch) stamps `lastTransitionTime` only when
 * the `Ready` status changes; otherwise the previous time is kept, so the result is stable. With `jobs`
 * (the child's Jobs the controller has cached), the status also says how the backups went
 * (src/pure/backup-runs.ts: `recentRuns`, `lastSuccessfulTime`, `lastFailedTime`, `LastBackupSucceeded`),
 * and `missedDueMs`, a run due then and never started, goes into `lastMissedTime`; without `jobs`,
 * those fields are left out.
 */
export function computeStatus(
  schedule: StatusSubject,
  child: KubeObject | undefined,
  outcome: StatusOutcome,
  now: number,
  jobs?: readonly JobView[],
  missedDueMs?: number,
): ScheduleStatus {
  const ours = outcome.kind === 'ChildNameConflict' ? undefined : child;
  const fromChild = childStatus(ours);
  const generation = schedule.metadata.generation;
  const ready = readyCondition(schedule, outcome, ours);
  const previous = schedule.status?.conditions?.find((c) => c.type === READY);
  const condition: Condition = {
    type: READY,
    ...ready,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    lastTransitionTime: previous && previous.status === ready.status ? previous.lastTransitionTime : formatTime(now),
  };
  // The history outlives the child (kept from the stored status); only the child's own Jobs add to it.
  const runs = jobs === undefined ? undefined : backupOutcome(schedule.status, ours ? jobs : [], fromChild.lastSuccessfulTime, generation, formatTime(now), missedDueMs === undefined ? undefined : formatTime(missedDueMs));
  const stored = (schedule.status?.conditions ?? []).filter((c) => c.type !== READY && (runs === undefined || c.type !== LAST_BACKUP_SUCCEEDED));
  const others = runs ? [runs.condition, ...stored] : stored;
  const status: ScheduleStatus = {};
  if (generation !== undefined) status.observedGeneration = generation;
  if (ours?.metadata.name) status.cronJobName = ours.metadata.name;
  if (fromChild.lastScheduleTime) status.lastScheduleTime = fromChild.lastScheduleTime;
  if (fromChild.lastSuccessfulTime) status.lastSuccessfulTime = fromChild.lastSuccessfulTime;
  if (ours) status.active = activeJobNames(fromChild.active);
  if (runs) {
    if (runs.lastSuccessfulTime) status.lastSuccessfulTime = runs.lastSuccessfulTime;
    if (runs.lastFailedTime) status.lastFailedTime = runs.lastFailedTime;
    if (runs.lastMissedTime) status.lastMissedTime = runs.lastMissedTime;
    status.recentRuns = runs.recentRuns;
  }
  // Conditions other writers set are kept, as many as the schema's bound leaves beside Ready.
  status.conditions = [condition, ...others.slice(0, MAX_CONDITIONS - 1)];
  return status;
}

function normalized(status: ScheduleStatus | undefined): unknown {
  // Drop undefined keys and key order: what a JSON round trip through the API server would do.
  return JSON.parse(JSON.stringify(status ?? {}));
}

/** Whether two statuses are the same as the API server would store them (a write would change nothing). */
export function statusEqual(a: ScheduleStatus | undefined, b: ScheduleStatus | undefined): boolean {
  return isDeepStrictEqual(normalized(a), normalized(b));
}
