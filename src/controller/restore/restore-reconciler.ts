/**
 * Reconciles one Restore: resolves where its backups are (spec.from, or the destination of the
 * BackupSchedule it names), checks the image and endpoint allow-lists the backups obey, creates its
 * one Job (buildRestoreJob) and mirrors the Job's progress into the status. A Restore runs at most
 * once: once Succeeded or Failed it is left alone, and once its status names its Job that Job is never
 * made again: a Job gone before it ended (deleted by hand, by a clean-up script) fails the Restore with
 * `JobDeleted`, since the restore may have run, partly or whole. Reads come from the caches; an
 * object cached as a stub (over its budget, src/runtime/cache-policy.ts) is read with one GET, and so
 * is the Job when the status names it and the cache does not hold it (the cache may be behind).
 */
import { isDeepStrictEqual } from 'node:util';
import type { Restore } from '../../../imports/restore.ts';
import { validateRestore } from '../../api/validate.ts';
import { isAlreadyExists, isNotFound } from '../../kube/api-status-error.ts';
import { splitObjectKey, type KubeObject } from '../../kube/object.ts';
import { ALLOWED_ENDPOINTS_FLAG, endpointAllowed } from '../../pure/endpoint-policy.ts';
import { ALLOWED_IMAGES_FLAG, imageAllowed } from '../../pure/image-policy.ts';
import { DEFAULT_BACKUP_IMAGE } from '../../pure/image.ts';
import { buildRestoreJob, restoreJobName, type Job, type ResolvedSource } from '../../pure/restore-job.ts';
import { computeRestoreStatus, jobEnd, type Blocked, type JobView, type RunnerView } from '../../pure/restore-status.ts';
import { isCacheStub, readWhole } from '../../runtime/cache-policy.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { EventRecorder } from '../event-recorder.ts';
import type { BackupScheduleObject } from '../resources.ts';
import { readRunnerReport, type ListPods } from './runner-pod.ts';

/** A Restore as read from the API server. */
export type RestoreObject = Restore & KubeObject;

/** Where an object lives. */
export interface ObjectRef {
  readonly namespace: string;
  readonly name: string;
}

/** What the reconciler reads (the informers' caches, a GET where they hold a stub or lag) and writes (the API server). */
export interface RestoreReconcilerDeps {
  readonly restores: { get(key: string): RestoreObject | undefined };
  readonly schedules: { get(key: string): BackupScheduleObject | undefined };
  readonly jobs: { get(key: string): (KubeObject & JobView) | undefined };
  /** One GET each: a Restore or BackupSchedule cached as a stub, a Job the cache does not hold whole. */
  readonly getRestore: (ref: ObjectRef) => Promise<RestoreObject>;
  readonly getSchedule: (ref: ObjectRef) => Promise<BackupScheduleObject>;
  readonly getJob: (ref: ObjectRef) => Promise<KubeObject & JobView>;
  readonly createJob: (job: Job) => Promise<unknown>;
  readonly updateStatus: (restore: RestoreObject) => Promise<unknown>;
  /** One LIST of Pods, once per finished Job, for the runner's termination message. */
  readonly listPods: ListPods;
  /** Where the end of a Restore and a missing or bad runner report are told. @default none */
  readonly events?: EventRecorder;
  /** The controller's `--backup-image`: what a spec without image runs, always allowed. */
  readonly backupImage?: string;
  readonly allowedImages: readonly string[];
  readonly allowedEndpoints: readonly string[];
  readonly clock: Clock;
  readonly logger: Logger;
}

/** Reconciles Restores by `namespace/name` key. */
export class RestoreReconciler {
  constructor(private readonly deps: RestoreReconcilerDeps) {}

  /** One pass over the Restore `key`; throws to be retried with backoff. */
  async reconcile(key: string): Promise<void> {
    const { namespace = '', name } = splitObjectKey(key);
    const restore = await readWhole(this.deps.restores.get(key), () => this.deps.getRestore({ namespace, name }));
    // Gone or going: the garbage collector deletes its Job (ownerReference). Ended: left alone, it ran once.
    if (restore === undefined || restore.metadata.deletionTimestamp !== undefined) return;
    if (restore.status?.phase === 'Succeeded' || restore.status?.phase === 'Failed') return;
    const jobName = restoreJobName(name);
    const job = await this.#job(restore, { namespace, name: jobName });
    if (job !== undefined && !job.metadata.ownerReferences?.some((o) => o.controller === true && o.uid === restore.metadata.uid)) {
      return this.#write(restore, jobName, undefined, { phase: 'Failed', reason: 'JobNameConflict', message: `a Job named ${jobName} exists in ${namespace} and is not this Restore's: delete it or recreate the Restore under another name` });
    }
    // The status names the Job, so it was made; the API server says it is gone, so it ended unseen or not at all.
    if (job === undefined && restore.status?.jobName !== undefined) {
      const message = `restore Job ${jobName} was deleted before it ended (the Restore was ${restore.status.phase ?? 'Pending'}): the restore may have run, partly or whole; a Restore runs at most once, so it is not run again: check the target volume, then create a new Restore to restore again`;
      return this.#write(restore, jobName, undefined, { phase: 'Failed', reason: 'JobDeleted', message, jobName });
    }
    let blocked: Blocked | undefined;
    let runner: RunnerView | undefined;
    // Read once: when the Job has ended and before the Restore records it.
    if (job !== undefined && jobEnd(job) !== undefined) {
      runner = await readRunnerReport(this.deps.listPods, job, { backup: restore.spec.backup, ...(restore.spec.from.backupScheduleName === undefined ? {} : { schedule: restore.spec.from.backupScheduleName }) });
    }
    if (job === undefined) {
      const plan = await this.#plan(restore);
      if ('blocked' in plan) blocked = plan.blocked;
      else {
        try {
          await this.deps.createJob(plan.job);
          this.deps.logger.info({ restore: key, job: jobName }, 'restore Job created');
        } catch (err) {
          // Made by an earlier pass whose cache had not caught up, or someone else's: the status written
          // now names the Job, so the next pass reads it (with a GET while the cache lacks it) and tells which.
          if (!isAlreadyExists(err)) throw err;
        }
      }
    }
    return this.#write(restore, jobName, job, blocked, runner);
  }

  /**
   * The Restore's Job: from the cache, or with a GET when the cache holds a stub of it, or holds
   * nothing while the status names it (the Job's event may not have arrived yet: only the API server
   * can tell a lagging cache from a deleted Job). Undefined when there is none.
   */
  async #job(restore: RestoreObject, ref: ObjectRef): Promise<(KubeObject & JobView) | undefined> {
    const cached = this.deps.jobs.get(`${ref.namespace}/${ref.name}`);
    if (cached !== undefined && !isCacheStub(cached)) return cached;
    if (cached === undefined && restore.status?.jobName === undefined) return undefined;
    try {
      return await this.deps.getJob(ref);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The Job to create, or why there is none. */
  async #plan(restore: RestoreObject): Promise<{ job: Job } | { blocked: Blocked }> {
    const problems = validateRestore(restore);
    if (problems.length > 0) return { blocked: { phase: 'Failed', reason: 'InvalidSpec', message: problems.map((p) => p.message).join('; ') } };
    const backupImage = this.deps.backupImage ?? DEFAULT_BACKUP_IMAGE;
    const image = restore.spec.image ?? backupImage;
    if (!imageAllowed(image, backupImage, this.deps.allowedImages)) {
      return { blocked: { phase: 'Failed', reason: 'ImageNotAllowed', message: `spec.image ${image} is not allowed by the operator's ${ALLOWED_IMAGES_FLAG}` } };
    }
    let resolved: ResolvedSource | undefined;
    const scheduleName = restore.spec.from.backupScheduleName;
    if (scheduleName !== undefined) {
      const namespace = restore.metadata.namespace ?? '';
      const schedule = await readWhole(this.deps.schedules.get(`${namespace}/${scheduleName}`), () => this.deps.getSchedule({ namespace, name: scheduleName }));
      // Not terminal: the BackupSchedule may be created (or come into the cache) later; its event brings the key back.
      if (schedule === undefined) return { blocked: { phase: 'Pending', reason: 'BackupScheduleNotFound', message: `spec.from.backupScheduleName: BackupSchedule ${restore.metadata.namespace ?? ''}/${scheduleName} does not exist` } };
      resolved = { ...(schedule.spec.destination.persistentVolumeClaim ? { persistentVolumeClaim: schedule.spec.destination.persistentVolumeClaim } : {}), ...(schedule.spec.destination.objectStore ? { objectStore: schedule.spec.destination.objectStore } : {}) };
    }
    const store = resolved?.objectStore ?? restore.spec.from.objectStore;
    if (store !== undefined && !endpointAllowed(store.endpoint, this.deps.allowedEndpoints)) {
      return { blocked: { phase: 'Failed', reason: 'EndpointNotAllowed', message: `the object store endpoint ${store.endpoint ?? ''} is not allowed by the operator's ${ALLOWED_ENDPOINTS_FLAG}` } };
    }
    return { job: buildRestoreJob(restore, resolved, { image: backupImage }) };
  }

  async #write(restore: RestoreObject, jobName: string, job: JobView | undefined, blocked: Blocked | undefined, runner?: RunnerView): Promise<void> {
    const now = new Date(this.deps.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const status = computeRestoreStatus(restore.status, restore.metadata.generation, jobName, job, blocked, now, runner);
    // Key order aside: the API server returns objects with their keys sorted.
    if (isDeepStrictEqual(status, restore.status ?? {})) return;
    await this.deps.updateStatus({ ...restore, status });
    if (runner !== undefined) this.#tell(restore, status, runner);
  }

  /** Events for the end of a Restore, once its status says so. */
  #tell(restore: RestoreObject, status: NonNullable<RestoreObject['status']>, runner: RunnerView): void {
    const { events } = this.deps;
    if (events === undefined) return;
    if (runner.problem !== undefined) events.event(restore, 'Warning', 'NoRunnerReport', runner.problem);
    const message = status.conditions?.[0]?.message ?? '';
    if (status.phase === 'Succeeded') events.event(restore, 'Normal', 'Restored', message);
    else if (status.phase === 'Failed') events.event(restore, 'Warning', 'RestoreFailed', message);
  }
}
