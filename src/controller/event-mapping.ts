/**
 * Which BackupSchedule a watch event concerns (controller-runtime's `EnqueueRequestForObject` and
 * `EnqueueRequestForOwner` with `OnlyControllerOwner`), and what the caches keep of each object.
 */
import { API_GROUP, KIND } from '../api/index.ts';
import { controllerOf, objectKey, type KubeObject } from '../kube/object.ts';
import { StringInterner } from '../runtime/string-interner.ts';

/** One interner for both caches: schedules and their children share most values. */
const interner = new StringInterner();

/** A BackupSchedule event enqueues the schedule itself. */
export function scheduleKey(schedule: KubeObject): string {
  return objectKey(schedule.metadata);
}

/**
 * A CronJob event enqueues the BackupSchedule that controls it, if any: a CronJob whose controller
 * ownerReference is a `BackupSchedule` of `kubelings.dev` (any version). Owner references are
 * namespace-local, so the owner lives in the CronJob's namespace. Other CronJobs map to nothing: one
 * with a child's name but another owner is found by the schedule's own reconcile, not through here.
 */
export function ownerScheduleKey(cronJob: KubeObject): string | undefined {
  const owner = controllerOf(cronJob.metadata);
  if (!owner || owner.kind !== KIND || owner.apiVersion.split('/')[0] !== API_GROUP) return undefined;
  return objectKey({ namespace: cronJob.metadata.namespace, name: owner.name });
}

/** The annotation `kubectl apply` writes: a full copy of the object, never read by the controller. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Cache transform for BackupSchedules: drops `managedFields` and the last-applied annotation, which the
 * controller never reads, and interns string values, to keep the cache small. Safe because schedules
 * are written only through `/status`, which ignores metadata (the API server keeps the stored metadata).
 */
export function stripSchedule<T extends KubeObject>(obj: T): T {
  const { managedFields: _managed, ...metadata } = obj.metadata;
  if (metadata.annotations?.[LAST_APPLIED_ANNOTATION] !== undefined) {
    const { [LAST_APPLIED_ANNOTATION]: _applied, ...annotations } = metadata.annotations;
    metadata.annotations = annotations;
  }
  return interner.internDeep({ ...obj, metadata });
}

/**
 * Cache transform for CronJobs: drops `managedFields` and interns string values; nothing else.
 * Annotations stay: the controller updates a drifted child with a PUT of the cached object, and a PUT
 * without an annotation would delete it on the server; an omitted `managedFields` is kept by the server.
 */
export function stripCronJob<T extends KubeObject>(obj: T): T {
  const { managedFields: _managed, ...metadata } = obj.metadata;
  return interner.internDeep({ ...obj, metadata });
}
