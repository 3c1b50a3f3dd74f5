/** Shared fixtures of the controller unit tests: schedules, and CronJobs as the API server stores them. */
import type { KubeObject } from '../../src/kube/object.ts';
import { applyBuiltinDefaults } from '../apiserver/builtins/index.ts';
import type { BackupScheduleObject } from '../../src/controller/resources.ts';

/** A valid BackupSchedule as the API server returns it in v1, the version the controller reads (defaults applied, uid and generation set). */
export function schedule(overrides: { name?: string; generation?: number; spec?: Record<string, unknown>; status?: Record<string, unknown> } = {}): BackupScheduleObject {
  return {
    apiVersion: 'kubelings.dev/v1',
    kind: 'BackupSchedule',
    metadata: { name: overrides.name ?? 'nightly-etcd', namespace: 'kubelings', uid: 'uid-schedule', generation: overrides.generation ?? 1, resourceVersion: '100' },
    spec: {
      schedule: '0 2 * * *',
      suspend: false,
      concurrencyPolicy: 'Forbid',
      source: { type: 'Etcd', etcd: { endpoints: ['https://etcd-0.etcd:2379'] } },
      destination: { persistentVolumeClaim: { claimName: 'backups' } },
      retention: { keepLast: 7 },
      ...overrides.spec,
    },
    ...(overrides.status ? { status: overrides.status } : {}),
  } as BackupScheduleObject;
}


/**
 * What kube-apiserver stores for a CronJob created from `sent`: the test API server's defaulting of
 * CronJob, Job and pod template fields (checked against the recorded kube-apiserver answer), plus uid
 * and resourceVersion.
 */
export function asStored(sent: KubeObject, resourceVersion = '200'): KubeObject {
  const obj = structuredClone(sent);
  obj.metadata = { ...obj.metadata, uid: 'uid-child', resourceVersion, creationTimestamp: '2026-11-30T00:05:22Z', generation: 1 };
  applyBuiltinDefaults('batch', 'cronjobs', obj);
  obj['status'] = {};
  return obj;
}
