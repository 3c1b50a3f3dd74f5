/**
 * ConversionReview bodies for the webhook's hardening tests: the attack of issue 30 (a 31.5 MiB review
 * of 254,000 tiny objects) and a legitimate large one (stored v1alpha1 schedules as kube-apiserver sends
 * them in one review for a whole LIST: metadata with managedFields, spec and status).
 */

/** A review body and how many objects it carries. */
export interface ReviewBody {
  readonly body: Buffer;
  readonly objects: number;
}

function reviewBody(objects: readonly string[], desiredAPIVersion: string, uid: string): Buffer {
  return Buffer.from(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":${JSON.stringify(uid)},"desiredAPIVersion":${JSON.stringify(desiredAPIVersion)},"objects":[${objects.join(',')}]}}`);
}

/**
 * `count` tiny v1alpha1 BackupSchedules to convert to v1, each padded to `objectBytes` (129 by default, 130 with its comma:
 * 254,000 of them are 31.5 MiB, under the webhook's 32 MiB body limit).
 */
export function attackReview(count = 254_000, objectBytes = 129): ReviewBody {
  const objects = Array.from({ length: count }, (_, i) => {
    const head = `{"apiVersion":"kubelings.dev/v1alpha1","kind":"BackupSchedule","metadata":{"name":"${i.toString(36)}","namespace":"`;
    const tail = '"},"spec":{}}';
    return `${head}${'n'.repeat(Math.max(1, objectBytes - head.length - tail.length))}${tail}`;
  });
  return { body: reviewBody(objects, 'kubelings.dev/v1', 'attack'), objects: count };
}

/** The i-th stored v1alpha1 schedule, as kube-apiserver reads it from etcd (managedFields of a client-side apply and of the controller's status writes). */
export function storedSchedule(i: number): Record<string, unknown> {
  const name = `backup-${i}`;
  const namespace = `team-${i % 40}`;
  return {
    apiVersion: 'kubelings.dev/v1alpha1',
    kind: 'BackupSchedule',
    metadata: {
      name,
      namespace,
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      resourceVersion: String(100_000 + i),
      generation: 1,
      creationTimestamp: '2026-11-01T00:00:00Z',
      labels: { team: namespace },
      managedFields: [
        {
          manager: 'kubectl-client-side-apply', operation: 'Update', apiVersion: 'kubelings.dev/v1alpha1', time: '2026-11-01T00:00:00Z', fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:team': {} } }, 'f:spec': { '.': {}, 'f:concurrencyPolicy': {}, 'f:destination': { '.': {}, 'f:persistentVolumeClaim': { '.': {}, 'f:claimName': {}, 'f:path': {} } }, 'f:retention': { '.': {}, 'f:keepLast': {} }, 'f:schedule': {}, 'f:source': { '.': {}, 'f:etcd': { '.': {}, 'f:endpoints': {}, 'f:tlsSecretName': {} } } } },
        },
        {
          manager: 'backupschedule-operator', operation: 'Update', apiVersion: 'kubelings.dev/v1', time: '2026-11-01T00:00:05Z', fieldsType: 'FieldsV1', subresource: 'status',
          fieldsV1: { 'f:status': { '.': {}, 'f:conditions': { '.': {}, 'k:{"type":"Ready"}': { '.': {}, 'f:lastTransitionTime': {}, 'f:message': {}, 'f:observedGeneration': {}, 'f:reason': {}, 'f:status': {}, 'f:type': {} } }, 'f:cronJobName': {}, 'f:observedGeneration': {} } },
        },
      ],
    },
    spec: {
      schedule: `${i % 60} ${i % 24} * * *`,
      suspend: false,
      concurrencyPolicy: 'Forbid',
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
      backoffLimit: 3,
      source: { etcd: { endpoints: [`https://etcd-${i % 3}.etcd:2379`], tlsSecretName: 'etcd-tls' } },
      destination: { persistentVolumeClaim: { claimName: 'backups', path: `team/${i}` } },
      retention: { keepLast: 7 },
    },
    status: {
      observedGeneration: 1,
      cronJobName: name,
      conditions: [{ type: 'Ready', status: 'True', reason: 'CronJobReady', message: 'the CronJob matches the spec', observedGeneration: 1, lastTransitionTime: '2026-11-01T00:00:05Z' }],
    },
  };
}

/** `count` stored v1alpha1 schedules in one review to v1, as kube-apiserver converts a LIST. */
export function storedSchedulesReview(count: number): ReviewBody {
  return { body: reviewBody(Array.from({ length: count }, (_, i) => JSON.stringify(storedSchedule(i))), 'kubelings.dev/v1', 'list'), objects: count };
}
