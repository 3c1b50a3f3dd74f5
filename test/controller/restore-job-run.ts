/**
 * Plays the Job controller and the kubelet for a restore Job on the test API server, which runs
 * neither: creates the Job's Pod (its template's labels, which carry the server-generated
 * `controller-uid`, and the Job as controller owner), writes the Pod's status with the restore
 * container terminated and its termination message, then writes the Job's terminal status.
 */
import { JOBS, PODS } from '../../src/controller/resources.ts';
import type { KubeClient } from '../../src/kube/kube-client.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { ResourceClient } from '../../src/kube/resource-client.ts';

/** A Job as the API server returns it: its template carries the generated selector labels. */
export type RestoreJobObject = KubeObject & { spec: { template: { metadata?: { labels?: Record<string, string> }; spec: Record<string, unknown> } }; status?: Record<string, unknown> };

/** How the run ends. */
export interface RunEnd {
  /** The container's exit code; 0 completes the Job, anything else fails it. */
  readonly exitCode: number;
  /** The termination message the container left; absent when it wrote none. */
  readonly message?: string;
  /** Pod name suffix. @default 'x7k2p' */
  readonly suffix?: string;
  /** Labels instead of the Job template's (a Pod someone else made). @default the template's */
  readonly labels?: Record<string, string>;
  /** Leave the Job's status alone (more Pods to come). @default false */
  readonly keepJobRunning?: boolean;
  /** When the Pod was created and ended. @default '2026-12-01T10:00:00Z' */
  readonly at?: string;
}

/** Creates the Pod of `job` with its restore container terminated as `end` says, then ends the Job. */
export async function endRestoreJob(admin: KubeClient, job: RestoreJobObject, end: RunEnd): Promise<KubeObject> {
  const pods = new ResourceClient<KubeObject & { status?: Record<string, unknown> }>(admin, PODS);
  const jobs = new ResourceClient<RestoreJobObject>(admin, JOBS);
  const { name = '', namespace = '', uid = '' } = job.metadata;
  const at = end.at ?? '2026-12-01T10:00:00Z';
  const pod = await pods.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${name}-${end.suffix ?? 'x7k2p'}`,
      namespace,
      labels: end.labels ?? { ...job.spec.template.metadata?.labels },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: job.spec.template.spec,
  });
  const containers = job.spec.template.spec['containers'] as { name: string; image: string }[];
  const terminated = { exitCode: end.exitCode, reason: end.exitCode === 0 ? 'Completed' : 'Error', startedAt: at, finishedAt: at, containerID: 'containerd://0123', ...(end.message === undefined ? {} : { message: end.message }) };
  await pods.updateStatus({
    ...pod,
    status: {
      phase: end.exitCode === 0 ? 'Succeeded' : 'Failed',
      startTime: at,
      containerStatuses: containers.map((c) => ({ name: c.name, image: c.image, imageID: '', ready: false, restartCount: 0, started: false, state: { terminated } })),
    },
  });
  if (end.keepJobRunning) return pod;
  const current = await jobs.get({ namespace, name });
  // Kubernetes 1.31+: SuccessCriteriaMet / FailureTarget first, then Complete / Failed once the Pods are done.
  const conditions = end.exitCode === 0
    ? [{ type: 'SuccessCriteriaMet', status: 'True', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' }, { type: 'Complete', status: 'True', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' }]
    : [{ type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }, { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }];
  await jobs.updateStatus({
    ...current,
    status: {
      startTime: at,
      ...(end.exitCode === 0 ? { completionTime: at, succeeded: 1 } : { failed: 1 }),
      conditions: conditions.map((c) => ({ ...c, lastProbeTime: at, lastTransitionTime: at })),
    },
  });
  return pod;
}
