/** The reconciler over mutable caches, with scripted API answers: shared by the reconciler tests of child writes and image policy. */
import jsonMergePatch from 'json-merge-patch';
import { buildCronJob } from '../../src/pure/index.ts';
import { supportsPodFailurePolicy } from '../../src/pure/cluster-features.ts';
import { BackupScheduleReconciler, type ReconcilerWrites } from '../../src/controller/backupschedule/reconciler.ts';
import type { EventRecorder, EventType } from '../../src/controller/event-recorder.ts';
import type { BackupScheduleObject } from '../../src/controller/resources.ts';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import type { JobView } from '../../src/pure/backup-runs.ts';
import { asStored, schedule } from './fixtures.ts';

/** A CronJob with an untyped spec, for edits in tests. */
export type CronJob = KubeObject & { spec: any };
/** How the fake API answers a write. */
export type Answer = (obj: KubeObject) => KubeObject;

/** The reconciler's `--backup-image`. */
export const IMAGE = 'ghcr.io/kubelings/backupschedule-operator:test';
/** The API server version the reconciler is told (old enough to lack CronJob time zones and Job podFailurePolicy). */
export const SERVER_VERSION = { major: 1, minor: 24, gitVersion: 'v1.24.17' } as const;
/** The one schedule's key. */
export const KEY = 'kubelings/nightly-etcd';
/** The child the reconciler wants for `s`. */
export const desiredOf = (s: BackupScheduleObject) => buildCronJob(s, { image: IMAGE, podFailurePolicy: supportsPodFailurePolicy(SERVER_VERSION) }) as KubeObject;

/**
 * A reconciler over mutable caches, with writes answered by `answers` (any other write fails the test)
 * and a status write that also updates the schedule cache, as the watch would.
 */
export function harness(initial: { schedule: BackupScheduleObject; child?: KubeObject; uncachedChild?: KubeObject }, answers: { create?: Answer; update?: Answer }, options: { allowedImages?: string[]; allowedEndpoints?: string[]; jobs?: (child: KubeObject) => readonly JobView[] } = {}) {
  const schedules = new Map([[KEY, initial.schedule]]);
  const cronJobs = new Map<string, KubeObject>(initial.child ? [[KEY, initial.child]] : []);
  /** The server's CronJob: the cached one, or `uncachedChild` (one outside the watch). */
  const live = (): KubeObject | undefined => cronJobs.get(KEY) ?? initial.uncachedChild;
  const calls: { name: keyof ReconcilerWrites; obj: KubeObject }[] = [];
  const events: { type: EventType; reason: string; message: string }[] = [];
  const clock = new FakeClock(Date.UTC(2026, 10, 30, 1, 0, 0));
  const call = (name: keyof ReconcilerWrites, obj: KubeObject, answer: Answer | undefined): Promise<KubeObject> => {
    calls.push({ name, obj: structuredClone(obj) });
    if (!answer) return Promise.reject(new Error(`unexpected write: ${name}`));
    try {
      return Promise.resolve(answer(structuredClone(obj)));
    } catch (err) {
      return Promise.reject(err);
    }
  };
  const writes: ReconcilerWrites = {
    createCronJob: (obj) => call('createCronJob', obj, answers.create),
    getCronJob: (ref) => {
      const found = live();
      return found ? Promise.resolve(structuredClone(found)) : Promise.reject(new ApiStatusError(statusErrors.notFound({ group: 'batch', resource: 'cronjobs' }, ref.name)));
    },
    getSchedule: (ref) => {
      const found = schedules.get(KEY);
      return found ? Promise.resolve(structuredClone(found)) : Promise.reject(new ApiStatusError(statusErrors.notFound({ group: 'kubelings.dev', resource: 'backupschedules' }, ref.name)));
    },
    // The answer gets what the patch makes of the server's object.
    patchCronJob: (_ref, patch) => call('patchCronJob', jsonMergePatch.apply(structuredClone(live()), structuredClone(patch)) as KubeObject, answers.update),
    updateScheduleStatus: (obj) => {
      calls.push({ name: 'updateScheduleStatus', obj: structuredClone(obj) });
      schedules.set(KEY, structuredClone(obj));
      return Promise.resolve(obj);
    },
  };
  const recorder: EventRecorder = { event: (_o, type, reason, message) => void events.push({ type, reason, message }) };
  const reconciler = new BackupScheduleReconciler({
    schedules, cronJobs, writes, events: recorder, backupImage: IMAGE, clock,
    serverVersion: () => SERVER_VERSION,
    ...(options.allowedImages ? { allowedImages: options.allowedImages } : {}),
    ...(options.allowedEndpoints ? { allowedEndpoints: options.allowedEndpoints } : {}),
    ...(options.jobs ? { jobs: options.jobs } : {}),
  });
  const ready = () => schedules.get(KEY)?.status?.conditions?.find((c) => c.type === 'Ready');
  const childWrites = () => calls.filter((c) => c.name !== 'updateScheduleStatus').length;
  return { schedules, cronJobs, calls, events, clock, reconciler, ready, childWrites };
}

/** A schedule whose status says its child is in sync at `generation`. */
export function converged(generation: number, spec: Record<string, unknown> = {}): BackupScheduleObject {
  const s = schedule({ generation, spec });
  s.status = {
    observedGeneration: generation, cronJobName: 'nightly-etcd', active: [],
    conditions: [{ type: 'Ready', status: 'True', reason: 'Created', message: 'CronJob "nightly-etcd" created', observedGeneration: generation, lastTransitionTime: '2026-11-30T00:00:00Z' }],
  };
  return s;
}

/** What an API server without CronJob time zones stores: the object without spec.timeZone, a new resourceVersion. */
export function dropTimeZone(resourceVersion: string): Answer {
  return (obj) => {
    const stored = asStored(obj, resourceVersion) as CronJob;
    delete stored.spec.timeZone;
    return stored;
  };
}

