/** Shared fixtures of the controller unit tests: schedules, and CronJobs as the API server stores them. */
import type { KubeObject } from '../../src/kube/object.ts';
import type { BackupScheduleObject } from '../../src/controller/resources.ts';

/** A valid BackupSchedule as the API server returns it (defaults applied, uid and generation set). */
export function schedule(overrides: { name?: string; generation?: number; spec?: Record<string, unknown>; status?: Record<string, unknown> } = {}): BackupScheduleObject {
  return {
    apiVersion: 'kubelings.dev/v1alpha1',
    kind: 'BackupSchedule',
    metadata: { name: overrides.name ?? 'nightly-etcd', namespace: 'kubelings', uid: 'uid-schedule', generation: overrides.generation ?? 1, resourceVersion: '100' },
    spec: {
      schedule: '0 2 * * *',
      suspend: false,
      concurrencyPolicy: 'Forbid',
      source: { etcd: { endpoints: ['https://etcd-0.etcd:2379'] } },
      destination: { persistentVolumeClaim: { claimName: 'backups' } },
      retention: { keepLast: 7 },
      ...overrides.spec,
    },
    ...(overrides.status ? { status: overrides.status } : {}),
  } as BackupScheduleObject;
}

type Json = Record<string, unknown>;

/**
 * What kube-apiserver stores for a CronJob created from `sent`: its defaulting of CronJob, Job and pod
 * template fields (shared/k8s-reference/cronjob-v1beta1-created-with-server-defaults.json), plus uid and
 * resourceVersion.
 */
export function asStored(sent: KubeObject, resourceVersion = '200'): KubeObject {
  const obj = structuredClone(sent) as KubeObject & { spec: Json };
  obj.metadata = { ...obj.metadata, uid: 'uid-child', resourceVersion, creationTimestamp: '2026-11-30T00:05:22Z', generation: 1 };
  const spec = obj.spec;
  spec['concurrencyPolicy'] ??= 'Allow';
  spec['suspend'] ??= false;
  spec['successfulJobsHistoryLimit'] ??= 3;
  spec['failedJobsHistoryLimit'] ??= 1;
  const jobTemplate = spec['jobTemplate'] as Json;
  jobTemplate['metadata'] = { creationTimestamp: null, ...(jobTemplate['metadata'] as Json) };
  const jobSpec = jobTemplate['spec'] as Json;
  jobSpec['backoffLimit'] ??= 6;
  const template = jobSpec['template'] as Json;
  template['metadata'] = { creationTimestamp: null, ...(template['metadata'] as Json) };
  const pod = template['spec'] as Json;
  pod['terminationGracePeriodSeconds'] ??= 30;
  pod['dnsPolicy'] ??= 'ClusterFirst';
  pod['schedulerName'] ??= 'default-scheduler';
  pod['securityContext'] ??= {};
  for (const c of pod['containers'] as Json[]) {
    c['terminationMessagePath'] ??= '/dev/termination-log';
    c['terminationMessagePolicy'] ??= 'File';
    c['imagePullPolicy'] ??= String(c['image']).endsWith(':latest') || !String(c['image']).includes(':') ? 'Always' : 'IfNotPresent';
    c['resources'] ??= {};
  }
  for (const v of (pod['volumes'] as Json[] | undefined) ?? []) {
    const secret = v['secret'] as Json | undefined;
    if (secret) secret['defaultMode'] ??= 420;
  }
  obj['status'] = {};
  return obj;
}
