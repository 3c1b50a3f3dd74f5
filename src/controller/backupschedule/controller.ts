/**
 * The BackupSchedule controller as the manager (src/runtime/manager.ts) runs it: its informers
 * (schedules, their child CronJobs, the backup Jobs those start), the event handlers that map a change to the schedule keys to
 * reconcile, the reconciler on a controller loop, and the heap compactor after bursts.
 */
import { childName, LABEL_MANAGED_BY, OPERATOR_NAME } from '../../pure/index.ts';
import type { KubeVersion } from '../../pure/cluster-features.ts';
import { objectKey, type KubeObject } from '../../kube/object.ts';
import { ResourceClient } from '../../kube/resource-client.ts';
import { Controller } from '../../runtime/controller.ts';
import { CONTROLLER_OWNER_UID_INDEX, controllerOwnerUidIndex } from '../../runtime/store.ts';
import type { ManagedController, Manager } from '../../runtime/manager.ts';
import type { ControllerOptions } from '../cli-options.ts';
import type { EventRecorder } from '../event-recorder.ts';
import { HeapCompactor } from '../heap-compactor.ts';
import { BACKUP_SCHEDULES, CRON_JOBS, JOBS, type BackupScheduleObject } from '../resources.ts';
import { JOB_CACHE, JOB_SELECTOR, ownerCronJobName } from './job-cache.ts';
import { CRON_JOB_CACHE, ownerScheduleKey, SCHEDULE_CACHE, scheduleKey } from './event-mapping.ts';
import { OwnStatusWrites } from './own-status-writes.ts';
import type { StatusObserver } from './reconciler-options.ts';
import { BackupScheduleReconciler } from './reconciler.ts';

/** The controller's name: metrics label, queue name, log field. */
export const CONTROLLER_NAME = 'backupschedule';

/** The Jobs informer, shared with the Restore controller (its restore Jobs carry the same label). */
export const jobInformerSpec = { resource: JOBS, cache: JOB_CACHE, labelSelector: JOB_SELECTOR, resyncPeriodMs: 0 } as const;

/** Index of the BackupSchedule caches: `namespace/<child CronJob name>` → the schedule. */
const CHILD_NAME_INDEX = 'child-name';

/**
 * The CronJob informer's selector: only the operator's children are listed, watched and cached, so
 * CronJobs anyone else creates cost nothing. A child whose labels were removed drops out of the cache;
 * reconcile then meets it through AlreadyExists and one GET, and its heal restores the labels.
 */
export const CHILD_SELECTOR = `${LABEL_MANAGED_BY}=${OPERATOR_NAME}`;

/**
 * Whether a BackupSchedule update is reconciled whoever made it (controller-runtime's
 * GenerationChangedPredicate, without its flaw of swallowing resyncs): a new generation, uid or
 * deletion. Resyncs deliver the same object twice and always pass. Any other update (status or
 * metadata only) keeps `generation`; it is reconciled unless it is the controller's own status write
 * coming back ({@link OwnStatusWrites}), so a status someone else wrote is corrected at once.
 */
export function needsReconcile(old: KubeObject, updated: KubeObject): boolean {
  return (
    old === updated ||
    old.metadata.generation !== updated.metadata.generation ||
    old.metadata.uid !== updated.metadata.uid ||
    old.metadata.deletionTimestamp !== updated.metadata.deletionTimestamp
  );
}

/** What {@link addBackupScheduleController} needs besides the manager. */
export interface BackupScheduleControllerSetup {
  readonly options: Pick<ControllerOptions, 'namespaces' | 'syncPeriodMs' | 'concurrency' | 'backupImage' | 'allowedBackupImages' | 'allowedBackupEndpoints'>;
  readonly events: EventRecorder;
  /** Resolves once the API server's version was read (or found unreadable); workers start after it. */
  readonly serverVersionChecked: Promise<unknown>;
  /** The API server's version, for messages. */
  readonly serverVersion: () => KubeVersion | undefined;
  /** Told every computed status (the backup-outcome metrics). @default none */
  readonly statusObserver?: StatusObserver;
}

/** The BackupSchedule controller, registered with `manager`; its work queue is exposed for the Event lane. */
export interface BackupScheduleController extends ManagedController {
  /** Reconciles running or keys waiting: the Events lane yields meanwhile. */
  busy(): boolean;
}

/** Builds the BackupSchedule controller over `manager`'s shared informers and adds it. */
export function addBackupScheduleController(manager: Manager, setup: BackupScheduleControllerSetup): BackupScheduleController {
  const { options, events } = setup;
  const { client, clock, logger, metrics } = manager;
  const schedulesApi = new ResourceClient<BackupScheduleObject>(client, BACKUP_SCHEDULES);
  const cronJobsApi = new ResourceClient<KubeObject>(client, CRON_JOBS);

  const schedules = manager.namespacedInformers<BackupScheduleObject>(options.namespaces, { resource: BACKUP_SCHEDULES, cache: SCHEDULE_CACHE, resyncPeriodMs: options.syncPeriodMs });
  for (const informer of schedules.all) informer.store.addIndex(CHILD_NAME_INDEX, (s) => (s.metadata.name ? [objectKey({ namespace: s.metadata.namespace, name: childName(s) })] : []));
  const cronJobs = manager.namespacedInformers<KubeObject>(options.namespaces, {
    resource: CRON_JOBS,
    cache: CRON_JOB_CACHE,
    labelSelector: CHILD_SELECTOR,
    // No resync of its own: the schedules' resync reconciles every schedule, each looking at its child.
    resyncPeriodMs: 0,
  });

  // The backup Jobs, read only: how the runs went (src/pure/backup-runs.ts), found by their CronJob's uid.
  const jobs = manager.namespacedInformers<KubeObject>(options.namespaces, jobInformerSpec);
  for (const informer of jobs.all) informer.store.addIndex(CONTROLLER_OWNER_UID_INDEX, controllerOwnerUidIndex);

  const reconciler = new BackupScheduleReconciler({
    schedules,
    cronJobs,
    jobs: (child) => (child.metadata.uid ? jobs.byIndex(CONTROLLER_OWNER_UID_INDEX, child.metadata.namespace, child.metadata.uid) : []),
    ...(setup.statusObserver ? { statusObserver: setup.statusObserver } : {}),
    writes: {
      createCronJob: (cronJob) => cronJobsApi.create(cronJob),
      getCronJob: (ref) => cronJobsApi.get(ref),
      getSchedule: (ref) => schedulesApi.get(ref),
      patchCronJob: (ref, patch) => cronJobsApi.patch(ref, patch, { type: 'merge' }),
      updateScheduleStatus: (schedule) => ownStatusWrites.track(scheduleKey(schedule), () => schedulesApi.updateStatus(schedule), (stored) => stored.metadata?.resourceVersion),
    },
    events,
    backupImage: options.backupImage,
    allowedImages: options.allowedBackupImages,
    allowedEndpoints: options.allowedBackupEndpoints,
    serverVersion: setup.serverVersion,
    clock,
    logger,
  });
  const controller = new Controller({
    name: CONTROLLER_NAME,
    reconciler: {
      reconcile: (ctx) => {
        compactor.reconciled();
        return reconciler.reconcile(ctx.key);
      },
    },
    concurrency: options.concurrency,
    informers: [...schedules.all, ...cronJobs.all, ...jobs.all],
    logger,
    metrics,
    workQueueMetrics: metrics.workQueue,
    clock,
  });
  const queue = controller.queue;
  // Status-only updates not written by this controller are reconciled: a foreign status is corrected at once.
  const ownStatusWrites = new OwnStatusWrites((key) => queue.add(key));
  const compactor = new HeapCompactor({
    idle: () => controller.activeWorkers === 0 && queue.len() === 0,
    clock,
    onCompacted: (reconciles, durationMs) => {
      const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
      const mib = (bytes: number): number => Math.round(bytes / 2 ** 20);
      logger.info(
        { reconciles, durationMs: Math.round(durationMs), rssMiB: mib(rss), heapTotalMiB: mib(heapTotal), heapUsedMiB: mib(heapUsed), externalMiB: mib(external), arrayBuffersMiB: mib(arrayBuffers) },
        'heap compacted after a burst of reconciles',
      );
    },
  });

  for (const informer of schedules.all) {
    informer.addEventHandler({
      onAdd: (s) => queue.add(scheduleKey(s)),
      onUpdate: (old, s) => {
        const key = scheduleKey(s);
        if (needsReconcile(old, s) || ownStatusWrites.isForeign(key, s.metadata.resourceVersion)) queue.add(key);
      },
      onDelete: (s) => {
        const key = scheduleKey(s);
        ownStatusWrites.forget(key);
        queue.add(key);
      },
    });
  }
  // A CronJob event concerns its controlling BackupSchedule, and also the schedule whose child name it
  // carries: that is how a schedule in ChildNameConflict hears that a labelled CronJob (a previous
  // incarnation's child) went away. Unlabelled foreign CronJobs are not watched: reconcile rechecks those.
  const enqueueForCronJob = (cronJob: KubeObject): void => {
    const owner = ownerScheduleKey(cronJob);
    if (owner) queue.add(owner);
    const namespace = cronJob.metadata.namespace;
    for (const s of schedules.byIndex(CHILD_NAME_INDEX, namespace, objectKey(cronJob.metadata))) {
      const key = scheduleKey(s);
      if (key !== owner) queue.add(key);
    }
  };
  for (const informer of cronJobs.all) {
    informer.addEventHandler({
      onAdd: enqueueForCronJob,
      onUpdate: (old, cronJob) => {
        const oldOwner = ownerScheduleKey(old);
        if (oldOwner && oldOwner !== ownerScheduleKey(cronJob)) queue.add(oldOwner);
        enqueueForCronJob(cronJob);
      },
      onDelete: enqueueForCronJob,
    });
  }

  // A Job event concerns the schedule whose child CronJob controls the Job.
  const enqueueForJob = (job: KubeObject): void => {
    const cronJob = ownerCronJobName(job);
    const namespace = job.metadata.namespace;
    if (cronJob === undefined) return;
    for (const s of schedules.byIndex(CHILD_NAME_INDEX, namespace, objectKey({ namespace, name: cronJob }))) queue.add(scheduleKey(s));
  };
  for (const informer of jobs.all) informer.addEventHandler({ onAdd: enqueueForJob, onUpdate: (_, job) => enqueueForJob(job), onDelete: enqueueForJob });

  const managed: BackupScheduleController = {
    name: CONTROLLER_NAME,
    busy: () => controller.activeWorkers > 0 || queue.len() > 0,
    // Read before the workers start (they start after the caches sync); the reconciler only uses it for messages.
    start: async () => {
      await setup.serverVersionChecked;
      await controller.start();
      compactor.start();
    },
    pause: () => controller.pause(),
    resume: () => {
      // Another leader may have acted meanwhile: every schedule is looked at again, as after a restart.
      for (const informer of schedules.all) for (const key of informer.store.keys()) queue.add(key);
      controller.resume();
    },
    stop: (deadlineMs) => {
      compactor.stop();
      return controller.stop(deadlineMs);
    },
  };
  manager.add(managed);
  return managed;
}
