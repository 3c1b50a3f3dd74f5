/**
 * The Restore controller as the manager (src/runtime/manager.ts) runs it: informers of Restores, of
 * Jobs (the one the BackupSchedule controller reads: restore Jobs carry the same label) and of
 * BackupSchedules (the same shared informer, for the destination a Restore names), the event handlers
 * that map a change to the Restore keys to reconcile, and the reconciler on a controller loop.
 *
 * The Restore CRD may be missing (applied after the Deployment, or left out): the controller then
 * waits for the API server to serve `restores.kubelings.dev/v1` (src/runtime/served-resource.ts) before
 * its Restore informers start and its workers run, `/readyz` says so in its `restore-controller`
 * check, and the BackupSchedule controller runs meanwhile.
 */
import { objectKey, type KubeObject } from '../../kube/object.ts';
import { ResourceClient } from '../../kube/resource-client.ts';
import { isCacheStub, type CachePolicy } from '../../runtime/cache-policy.ts';
import type { JobView } from '../../pure/restore-status.ts';
import { Controller } from '../../runtime/controller.ts';
import type { ManagedController, Manager } from '../../runtime/manager.ts';
import { ServedResource } from '../../runtime/served-resource.ts';
import { jobInformerSpec } from '../backupschedule/controller.ts';
import { SCHEDULE_CACHE, stripCustomResource } from '../backupschedule/event-mapping.ts';
import type { ControllerOptions } from '../cli-options.ts';
import type { EventRecorder } from '../event-recorder.ts';
import { BACKUP_SCHEDULES, JOBS, PODS, RESTORES, type BackupScheduleObject } from '../resources.ts';
import { RestoreReconciler, type RestoreObject } from './restore-reconciler.ts';

/** The controller's name: metrics label, queue name, log field. */
export const RESTORE_CONTROLLER_NAME = 'restore';

/** The `/readyz` check that says whether the Restore controller can run (its CRD served). */
export const RESTORE_READY_CHECK = 'restore-controller';

/**
 * What the Restore cache keeps ({@link stripCustomResource}: no labels, annotations, managedFields…),
 * within 64 KiB an object: the largest spec the schema admits is ~7 KiB and the status the controller
 * writes one condition (its message at most 32 KiB); a status someone else inflated is cached as a stub
 * and read with a GET by each reconcile of its Restore.
 */
export const RESTORE_CACHE: CachePolicy<RestoreObject> = { transform: stripCustomResource, maxObjectBytes: 64 * 1024 };

/**
 * Builds the Restore controller over `manager`'s shared informers and adds it; `events` (the operator's
 * recorder) hears how each Restore ended.
 */
export function addRestoreController(manager: Manager, options: Pick<ControllerOptions, 'namespaces' | 'syncPeriodMs' | 'concurrency' | 'backupImage' | 'allowedBackupImages' | 'allowedBackupEndpoints'>, events?: EventRecorder): ManagedController {
  const { client, clock, logger, metrics } = manager;
  const restoresApi = new ResourceClient<RestoreObject>(client, RESTORES);
  const schedulesApi = new ResourceClient<BackupScheduleObject>(client, BACKUP_SCHEDULES);
  const jobsApi = new ResourceClient<KubeObject>(client, JOBS);
  // No informer: one LIST per finished Restore (runner-pod.ts), never a cache of Pods.
  const podsApi = new ResourceClient<KubeObject>(client, PODS);
  const served = new ServedResource({
    client,
    resource: RESTORES,
    hint: 'the Restore controller waits for it (apply the Restore CRD: dist/02-customresourcedefinition-restores.kubelings.dev.yaml); BackupSchedules are reconciled meanwhile',
    clock,
    logger,
  });
  manager.addReadyCheck({ name: RESTORE_READY_CHECK, check: () => {
    const problem = served.problem();
    return problem === undefined ? { ok: true } : { ok: false, reason: `${problem}; BackupSchedules are reconciled meanwhile` };
  } });
  const startAfter = (signal: AbortSignal): Promise<void> => served.served(signal);
  const restores = manager.namespacedInformers<RestoreObject>(options.namespaces, { resource: RESTORES, cache: RESTORE_CACHE, resyncPeriodMs: options.syncPeriodMs, startAfter });
  const jobs = manager.namespacedInformers<KubeObject>(options.namespaces, jobInformerSpec);
  // The BackupSchedule controller's informer, requested with the same spec so the manager shares it.
  const schedules = manager.namespacedInformers<BackupScheduleObject>(options.namespaces, { resource: BACKUP_SCHEDULES, cache: SCHEDULE_CACHE, resyncPeriodMs: options.syncPeriodMs });

  const reconciler = new RestoreReconciler({
    restores,
    schedules,
    // The Job cache keeps what JobView reads (src/controller/backupschedule/job-cache.ts).
    jobs: { get: (key) => jobs.get(key) as (KubeObject & JobView) | undefined },
    getRestore: (ref) => restoresApi.get(ref),
    getSchedule: (ref) => schedulesApi.get(ref),
    getJob: (ref) => jobsApi.get(ref) as Promise<KubeObject & JobView>,
    createJob: (job) => jobsApi.create(job as KubeObject),
    updateStatus: (restore) => restoresApi.updateStatus(restore),
    listPods: (request) => podsApi.list(request),
    ...(events === undefined ? {} : { events }),
    ...(options.backupImage === undefined ? {} : { backupImage: options.backupImage }),
    allowedImages: options.allowedBackupImages,
    allowedEndpoints: options.allowedBackupEndpoints,
    clock,
    logger,
  });
  const controller = new Controller({
    name: RESTORE_CONTROLLER_NAME,
    reconciler: { reconcile: (ctx) => reconciler.reconcile(ctx.key) },
    concurrency: options.concurrency,
    informers: [...restores.all, ...jobs.all, ...schedules.all],
    logger,
    metrics,
    workQueueMetrics: metrics.workQueue,
    clock,
  });
  const queue = controller.queue;
  const key = (obj: KubeObject): string => objectKey(obj.metadata);
  for (const informer of restores.all) informer.addEventHandler({ onAdd: (r) => queue.add(key(r)), onUpdate: (_, r) => queue.add(key(r)), onDelete: (r) => queue.add(key(r)) });
  // A Job event concerns the Restore that controls it.
  const enqueueForJob = (job: KubeObject): void => {
    const owner = job.metadata.ownerReferences?.find((o) => o.controller === true && o.kind === RESTORES.kind);
    if (owner !== undefined) queue.add(objectKey({ namespace: job.metadata.namespace, name: owner.name }));
  };
  for (const informer of jobs.all) informer.addEventHandler({ onAdd: enqueueForJob, onUpdate: (_, job) => enqueueForJob(job), onDelete: enqueueForJob });
  // A BackupSchedule appearing (or changing) concerns the Restores of its namespace still waiting for
  // it (a stub's spec is unknown: it is looked at too).
  const enqueueForSchedule = (schedule: KubeObject): void => {
    for (const informer of restores.all) {
      for (const restore of informer.store.list(schedule.metadata.namespace)) {
        const waiting = isCacheStub(restore) || (restore.spec?.from?.backupScheduleName === schedule.metadata.name && restore.status?.phase !== 'Succeeded' && restore.status?.phase !== 'Failed');
        if (waiting) queue.add(key(restore));
      }
    }
  };
  for (const informer of schedules.all) informer.addEventHandler({ onAdd: enqueueForSchedule, onUpdate: (_, s) => enqueueForSchedule(s), onDelete: () => undefined });

  const stopped = new AbortController();
  const managed: ManagedController = {
    name: RESTORE_CONTROLLER_NAME,
    start: async () => {
      // Its caches cannot sync before the CRD is served: waiting here keeps the sync timeout from ending the process.
      try {
        await served.served(stopped.signal);
      } catch {
        return; // stopped while waiting
      }
      await controller.start();
    },
    pause: () => controller.pause(),
    resume: () => {
      for (const informer of restores.all) for (const k of informer.store.keys()) queue.add(k);
      controller.resume();
    },
    stop: (deadlineMs) => {
      stopped.abort(new Error('restore controller stopped'));
      return controller.stop(deadlineMs);
    },
  };
  manager.add(managed);
  return managed;
}
