/** Object builders and polling helpers shared by the e2e tests. */
import { JOBS, type BackupScheduleObject } from '../../src/controller/resources.ts';
import { ResourceClient } from '../../src/kube/resource-client.ts';
import { isNotFound } from '../../src/kube/api-status-error.ts';
import type { KubeClient } from '../../src/kube/kube-client.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import type { RequestLogEntry } from '../apiserver/index.ts';
import { clientFor, waitFor, CONTROLLER_USER } from './harness.ts';

/** A BackupSchedule manifest (what a user would apply), in v1: the storage version, so no conversion is involved. */
export function scheduleManifest(namespace: string, name: string, spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'kubelings.dev/v1',
    kind: 'BackupSchedule',
    metadata: { name, namespace },
    spec: {
      schedule: '0 2 * * *',
      source: { type: 'Etcd', etcd: { endpoints: ['https://etcd-0.etcd:2379'] } },
      destination: { persistentVolumeClaim: { claimName: 'backups' } },
      retention: { keepLast: 7 },
      ...spec,
    },
  };
}

/** The same BackupSchedule written in v1alpha1, as GitOps repos from before v1 hold it (converted by the webhook). */
export function scheduleManifestV1alpha1(namespace: string, name: string, spec: Record<string, unknown> = {}): KubeObject {
  const v1 = scheduleManifest(namespace, name, spec) as KubeObject & { spec: { source: Record<string, unknown> } };
  const { type: _type, ...source } = v1.spec.source;
  return { ...v1, apiVersion: 'kubelings.dev/v1alpha1', spec: { ...v1.spec, source, ...(spec['source'] ? { source: spec['source'] } : {}) } };
}

/** Lists every object of a kind in `namespace`, all pages. */
export async function listAll<T extends KubeObject>(list: (o: { namespace: string; limit: number; continue?: string }) => Promise<{ items: T[]; metadata: { continue?: string } }>, namespace: string): Promise<T[]> {
  const out: T[] = [];
  let token: string | undefined;
  do {
    const page = await list({ namespace, limit: 5_000, ...(token ? { continue: token } : {}) });
    out.push(...page.items);
    token = page.metadata.continue || undefined;
  } while (token);
  return out;
}

/** Creates `count` objects with at most 25 requests in flight. */
export async function createAll(count: number, create: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < count; i += 25) await Promise.all(Array.from({ length: Math.min(25, count - i) }, (_, j) => create(i + j)));
}

/** Typed access for the tests. */
export function api(admin: KubeClient) {
  const schedules = clientFor<BackupScheduleObject>(admin, 'BackupSchedule');
  /** BackupSchedules read and written in v1alpha1 (through the conversion webhook). */
  const schedulesV1alpha1 = clientFor<KubeObject & { spec: any; status?: any }>(admin, 'BackupSchedule', 'kubelings.dev/v1alpha1');
  const cronJobs = clientFor<KubeObject & { spec: any; status?: any }>(admin, 'CronJob');
  const namespaces = clientFor(admin, 'Namespace');
  return {
    schedules,
    schedulesV1alpha1,
    cronJobs,
    async createNamespace(name: string): Promise<void> {
      await namespaces.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    },
    /** The Ready condition once `accept` says yes. */
    async waitForReady(namespace: string, name: string, accept: (s: BackupScheduleObject) => boolean = (s) => readyOf(s)?.status === 'True', timeoutMs = 15_000): Promise<BackupScheduleObject> {
      return waitFor(`BackupSchedule ${namespace}/${name} to satisfy the condition`, async () => {
        const s = await schedules.get({ namespace, name });
        return accept(s) ? s : undefined;
      }, timeoutMs);
    },
    async waitForCronJob(namespace: string, name: string, accept: (c: KubeObject & { spec: any }) => boolean = () => true, timeoutMs = 15_000) {
      return waitFor(`CronJob ${namespace}/${name}`, async () => {
        try {
          const c = await cronJobs.get({ namespace, name });
          return accept(c) ? c : undefined;
        } catch (err) {
          if (isNotFound(err)) return undefined;
          throw err;
        }
      }, timeoutMs);
    },
    async waitForCronJobGone(namespace: string, name: string, timeoutMs = 15_000): Promise<void> {
      await waitFor(`CronJob ${namespace}/${name} to be deleted`, async () => {
        try {
          await cronJobs.get({ namespace, name });
          return false;
        } catch (err) {
          if (isNotFound(err)) return true;
          throw err;
        }
      }, timeoutMs);
    },
    /** Core Events in `namespace` about `name`. */
    async events(namespace: string, name: string): Promise<(KubeObject & { reason: string; message: string; type: string; count: number })[]> {
      const list = await clientFor(admin, 'Event').list({ namespace });
      return (list.items as (KubeObject & { reason: string; message: string; type: string; count: number; involvedObject: { name: string } })[]).filter((e) => e.involvedObject.name === name);
    },
  };
}

/** The Ready condition of a schedule. */
export function readyOf(s: BackupScheduleObject): { status: string; reason: string; message: string; observedGeneration?: number } | undefined {
  return s.status?.conditions?.find((c) => c.type === 'Ready');
}

/** Writes by the controller (anything but get/list/watch), optionally only those that succeeded. */
export function controllerWrites(entries: readonly RequestLogEntry[], options: { namespace?: string; includeEvents?: boolean; succeededOnly?: boolean } = {}): RequestLogEntry[] {
  return entries.filter(
    (e) =>
      e.user === CONTROLLER_USER &&
      !['get', 'list', 'watch'].includes(e.verb) &&
      (options.includeEvents || e.resource !== 'events') &&
      (options.namespace === undefined || e.namespace === options.namespace) &&
      (!options.succeededOnly || (e.code >= 200 && e.code < 300)),
  );
}

/** A child CronJob as the API server returns it: what a Job it starts is made from. */
export type ChildCronJob = KubeObject & { spec: { jobTemplate: { metadata: { labels: Record<string, string> }; spec: unknown } } };

/**
 * Does what the CronJob controller and the Job controller would (the test API server has neither):
 * creates the Job `name` controlled by `cronJob`, with its Job template's labels and spec, then writes
 * its `status` through `/status`.
 */
export async function runJob(admin: KubeClient, cronJob: ChildCronJob, name: string, status: Record<string, unknown>): Promise<void> {
  const jobs = new ResourceClient<KubeObject & { spec: unknown; status?: Record<string, unknown> }>(admin, JOBS);
  const created = await jobs.create({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: cronJob.metadata.namespace ?? '',
      labels: cronJob.spec.jobTemplate.metadata.labels,
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: cronJob.metadata.name ?? '', uid: cronJob.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec: cronJob.spec.jobTemplate.spec,
  });
  await jobs.updateStatus({ ...created, status });
}

/** A Job status the Job controller writes when it fails the Job for `reason` at `at`. */
export function failedJobStatus(at: string, reason: string, message: string): Record<string, unknown> {
  return { startTime: at, failed: 1, conditions: [{ type: 'Failed', status: 'True', reason, message, lastProbeTime: at, lastTransitionTime: at }] };
}
