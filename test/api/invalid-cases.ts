/** A corpus of invalid BackupSchedules: each a mutation of a valid one and the field it must name. */

/** A valid BackupSchedule to mutate. */
export function validSchedule(): Record<string, any> {
  return {
    apiVersion: 'kubelings.dev/v1alpha1',
    kind: 'BackupSchedule',
    metadata: { name: 'nightly', namespace: 'team-a', uid: '0b6f1c1e-0000-4000-8000-000000000001' },
    spec: {
      schedule: '0 2 * * *',
      source: { etcd: { endpoints: ['https://etcd-0.etcd:2379'], tlsSecretName: 'etcd-tls' } },
      destination: { persistentVolumeClaim: { claimName: 'backups', path: 'etcd' } },
      retention: { keepLast: 7 },
    },
  };
}

/** One invalid case: a name, a mutation of validSchedule(), and the field the error must name. */
export interface InvalidCase {
  readonly name: string;
  readonly mutate: (o: Record<string, any>) => void;
  readonly field: string;
  /** Whether the CRD's openAPIV3Schema alone (ajv, no CEL/cron/tz/unknown-field checks) rejects it too. */
  readonly schemaRejects: boolean;
}

const pvcSource = (o: Record<string, any>) => {
  o.spec.source = { persistentVolumeClaim: { claimName: 'app-data' } };
};

export const INVALID_CASES: readonly InvalidCase[] = [
  { name: 'spec missing', mutate: (o) => delete o.spec, field: 'spec', schemaRejects: true },
  { name: 'spec.schedule missing', mutate: (o) => delete o.spec.schedule, field: 'spec.schedule', schemaRejects: true },
  { name: 'spec.schedule empty', mutate: (o) => (o.spec.schedule = ''), field: 'spec.schedule', schemaRejects: true },
  { name: 'spec.schedule with four fields', mutate: (o) => (o.spec.schedule = '0 2 * *'), field: 'spec.schedule', schemaRejects: true },
  { name: 'spec.schedule with six fields', mutate: (o) => (o.spec.schedule = '0 0 2 * * *'), field: 'spec.schedule', schemaRejects: true },
  { name: 'spec.schedule day of week 7', mutate: (o) => (o.spec.schedule = '0 2 * * 7'), field: 'spec.schedule', schemaRejects: false },
  { name: 'spec.schedule day of week range to 7', mutate: (o) => (o.spec.schedule = '0 2 * * SUN-7'), field: 'spec.schedule', schemaRejects: false },
  { name: 'spec.schedule last day of month (L)', mutate: (o) => (o.spec.schedule = '0 2 L * *'), field: 'spec.schedule', schemaRejects: false },
  { name: 'spec.schedule nth weekday (#)', mutate: (o) => (o.spec.schedule = '0 2 * * 1#2'), field: 'spec.schedule', schemaRejects: false },
  { name: 'spec.schedule step 0', mutate: (o) => (o.spec.schedule = '*/0 2 * * *'), field: 'spec.schedule', schemaRejects: false },
  { name: 'spec.schedule with a TZ prefix', mutate: (o) => (o.spec.schedule = 'TZ=UTC 0 2 * * *'), field: 'spec.schedule', schemaRejects: false },
  { name: 'spec.schedule hour out of range', mutate: (o) => (o.spec.schedule = '0 25 * * *'), field: 'spec.schedule', schemaRejects: false },
  { name: 'spec.schedule minute out of range', mutate: (o) => (o.spec.schedule = '61 2 * * *'), field: 'spec.schedule', schemaRejects: false },
  { name: 'spec.schedule unknown macro', mutate: (o) => (o.spec.schedule = '@fortnightly'), field: 'spec.schedule', schemaRejects: true },
  { name: 'spec.schedule @every without a unit', mutate: (o) => (o.spec.schedule = '@every 5'), field: 'spec.schedule', schemaRejects: false },
  { name: 'spec.schedule not a string', mutate: (o) => (o.spec.schedule = 2), field: 'spec.schedule', schemaRejects: true },
  { name: 'spec.timeZone unknown', mutate: (o) => (o.spec.timeZone = 'Mars/Olympus_Mons'), field: 'spec.timeZone', schemaRejects: false },
  { name: 'spec.timeZone in lower case', mutate: (o) => (o.spec.timeZone = 'utc'), field: 'spec.timeZone', schemaRejects: false },
  { name: 'spec.timeZone with the wrong case', mutate: (o) => (o.spec.timeZone = 'europe/berlin'), field: 'spec.timeZone', schemaRejects: false },
  { name: 'spec.timeZone removed from tzdata', mutate: (o) => (o.spec.timeZone = 'US/Pacific-New'), field: 'spec.timeZone', schemaRejects: false },
  { name: 'spec.timeZone Local', mutate: (o) => (o.spec.timeZone = 'Local'), field: 'spec.timeZone', schemaRejects: false },
  { name: 'spec.timeZone with a part over 14 characters', mutate: (o) => (o.spec.timeZone = 'America/Argentina_Buenos_Aires'), field: 'spec.timeZone', schemaRejects: true },
  { name: 'spec.timeZone with spaces', mutate: (o) => (o.spec.timeZone = 'Europe/ Berlin'), field: 'spec.timeZone', schemaRejects: true },
  { name: 'spec.suspend not a boolean', mutate: (o) => (o.spec.suspend = 'yes'), field: 'spec.suspend', schemaRejects: true },
  { name: 'spec.source missing', mutate: (o) => delete o.spec.source, field: 'spec.source', schemaRejects: true },
  { name: 'spec.source empty', mutate: (o) => (o.spec.source = {}), field: 'spec.source', schemaRejects: false },
  {
    name: 'spec.source with both etcd and persistentVolumeClaim',
    mutate: (o) => (o.spec.source.persistentVolumeClaim = { claimName: 'data' }),
    field: 'spec.source',
    schemaRejects: false,
  },
  { name: 'spec.source.etcd.endpoints missing', mutate: (o) => delete o.spec.source.etcd.endpoints, field: 'spec.source.etcd.endpoints', schemaRejects: true },
  { name: 'spec.source.etcd.endpoints empty', mutate: (o) => (o.spec.source.etcd.endpoints = []), field: 'spec.source.etcd.endpoints', schemaRejects: true },
  { name: 'spec.source.etcd.endpoints not a URL', mutate: (o) => (o.spec.source.etcd.endpoints = ['etcd-0:2379']), field: 'spec.source.etcd.endpoints[0]', schemaRejects: true },
  {
    name: 'spec.source.etcd.endpoints with a comma-separated list in one item',
    mutate: (o) => (o.spec.source.etcd.endpoints = ['https://a:1,http://b:2']),
    field: 'spec.source.etcd.endpoints[0]',
    schemaRejects: true,
  },
  { name: 'spec.source.etcd.endpoints with a path', mutate: (o) => (o.spec.source.etcd.endpoints = ['https://etcd:2379/v3']), field: 'spec.source.etcd.endpoints[0]', schemaRejects: true },
  { name: 'spec.source.etcd.endpoints duplicated', mutate: (o) => (o.spec.source.etcd.endpoints = ['https://a:2379', 'https://a:2379']), field: 'spec.source.etcd.endpoints', schemaRejects: false },
  { name: 'spec.source.etcd http endpoint with TLS', mutate: (o) => (o.spec.source.etcd.endpoints = ['http://etcd:2379']), field: 'spec.source.etcd.endpoints', schemaRejects: false },
  { name: 'spec.source.etcd.tlsSecretName uppercase', mutate: (o) => (o.spec.source.etcd.tlsSecretName = 'Etcd-TLS'), field: 'spec.source.etcd.tlsSecretName', schemaRejects: true },
  {
    name: 'spec.source.persistentVolumeClaim.claimName missing',
    mutate: (o) => (o.spec.source = { persistentVolumeClaim: {} }),
    field: 'spec.source.persistentVolumeClaim.claimName',
    schemaRejects: true,
  },
  {
    name: 'source and destination the same claim',
    mutate: (o) => (o.spec.source = { persistentVolumeClaim: { claimName: 'backups' } }),
    field: 'spec.destination.persistentVolumeClaim.claimName',
    schemaRejects: false,
  },
  { name: 'spec.destination missing', mutate: (o) => delete o.spec.destination, field: 'spec.destination', schemaRejects: true },
  {
    name: 'spec.destination.persistentVolumeClaim missing',
    mutate: (o) => (o.spec.destination = {}),
    field: 'spec.destination.persistentVolumeClaim',
    schemaRejects: true,
  },
  {
    name: 'spec.destination.persistentVolumeClaim.claimName with underscore',
    mutate: (o) => (o.spec.destination.persistentVolumeClaim.claimName = 'my_backups'),
    field: 'spec.destination.persistentVolumeClaim.claimName',
    schemaRejects: true,
  },
  {
    name: 'spec.destination.persistentVolumeClaim.path absolute',
    mutate: (o) => (o.spec.destination.persistentVolumeClaim.path = '/etc'),
    field: 'spec.destination.persistentVolumeClaim.path',
    schemaRejects: true,
  },
  {
    name: 'spec.destination.persistentVolumeClaim.path escaping the claim',
    mutate: (o) => (o.spec.destination.persistentVolumeClaim.path = 'a/../../etc'),
    field: 'spec.destination.persistentVolumeClaim.path',
    schemaRejects: false,
  },
  { name: 'spec.retention.keepLast zero', mutate: (o) => (o.spec.retention.keepLast = 0), field: 'spec.retention.keepLast', schemaRejects: true },
  { name: 'spec.retention.keepLast above 1000', mutate: (o) => (o.spec.retention.keepLast = 1001), field: 'spec.retention.keepLast', schemaRejects: true },
  { name: 'spec.retention.keepLast fractional', mutate: (o) => (o.spec.retention.keepLast = 2.5), field: 'spec.retention.keepLast', schemaRejects: true },
  { name: 'spec.retention.keepLast misspelt', mutate: (o) => (o.spec.retention = { keeplast: 3 }), field: 'spec.retention.keeplast', schemaRejects: false },
  { name: 'spec.concurrencyPolicy unknown', mutate: (o) => (o.spec.concurrencyPolicy = 'Queue'), field: 'spec.concurrencyPolicy', schemaRejects: true },
  { name: 'spec.startingDeadlineSeconds negative', mutate: (o) => (o.spec.startingDeadlineSeconds = -1), field: 'spec.startingDeadlineSeconds', schemaRejects: true },
  { name: 'spec.successfulJobsHistoryLimit above 100', mutate: (o) => (o.spec.successfulJobsHistoryLimit = 101), field: 'spec.successfulJobsHistoryLimit', schemaRejects: true },
  { name: 'spec.failedJobsHistoryLimit negative', mutate: (o) => (o.spec.failedJobsHistoryLimit = -1), field: 'spec.failedJobsHistoryLimit', schemaRejects: true },
  { name: 'spec.backoffLimit above 20', mutate: (o) => (o.spec.backoffLimit = 21), field: 'spec.backoffLimit', schemaRejects: true },
  { name: 'spec.activeDeadlineSeconds zero', mutate: (o) => (o.spec.activeDeadlineSeconds = 0), field: 'spec.activeDeadlineSeconds', schemaRejects: true },
  { name: 'spec.resources.requests.cpu not a quantity', mutate: (o) => (o.spec.resources = { requests: { cpu: 'two' } }), field: 'spec.resources.requests.cpu', schemaRejects: true },
  { name: 'spec.resources.limits.memory a number', mutate: (o) => (o.spec.resources = { limits: { memory: 512 } }), field: 'spec.resources.limits.memory', schemaRejects: true },
  { name: 'spec.resources.limits.memory negative', mutate: (o) => (o.spec.resources = { limits: { memory: '-1Gi' } }), field: 'spec.resources.limits.memory', schemaRejects: true },
  { name: 'spec.resources.requests.cpu negative', mutate: (o) => (o.spec.resources = { requests: { cpu: '-100m' } }), field: 'spec.resources.requests.cpu', schemaRejects: true },
  { name: 'spec.resources.requests.memory fractional exponent', mutate: (o) => (o.spec.resources = { requests: { memory: '1e1.5' } }), field: 'spec.resources.requests.memory', schemaRejects: true },
  {
    name: 'spec.resources.requests.memory exponent beyond int32',
    mutate: (o) => (o.spec.resources = { requests: { memory: '1e3000000000' } }),
    field: 'spec.resources.requests.memory',
    schemaRejects: false,
  },
  {
    name: 'spec.resources.requests.memory above its limit',
    mutate: (o) => (o.spec.resources = { requests: { memory: '1Gi' }, limits: { memory: '512Mi' } }),
    field: 'spec.resources.requests.memory',
    schemaRejects: false,
  },
  {
    name: 'spec.resources.requests.cpu above its limit by a milli',
    mutate: (o) => (o.spec.resources = { requests: { cpu: '1001m' }, limits: { cpu: '1' } }),
    field: 'spec.resources.requests.cpu',
    schemaRejects: false,
  },
  { name: 'spec.resources.limits unknown resource', mutate: (o) => (o.spec.resources = { limits: { gpu: '1' } }), field: 'spec.resources.limits.gpu', schemaRejects: false },
  { name: 'spec.podSecurityContext.runAsUser root', mutate: (o) => (o.spec.podSecurityContext = { runAsUser: 0 }), field: 'spec.podSecurityContext.runAsUser', schemaRejects: true },
  { name: 'spec.podSecurityContext.fsGroup negative', mutate: (o) => (o.spec.podSecurityContext = { fsGroup: -1 }), field: 'spec.podSecurityContext.fsGroup', schemaRejects: true },
  { name: 'spec.podSecurityContext.supplementalGroups duplicate', mutate: (o) => (o.spec.podSecurityContext = { supplementalGroups: [70, 70] }), field: 'spec.podSecurityContext.supplementalGroups', schemaRejects: false },
  { name: 'spec.podSecurityContext.fsGroupChangePolicy unknown', mutate: (o) => (o.spec.podSecurityContext = { fsGroupChangePolicy: 'Never' }), field: 'spec.podSecurityContext.fsGroupChangePolicy', schemaRejects: true },
  { name: 'spec.podSecurityContext.runAsNonRoot not settable', mutate: (o) => (o.spec.podSecurityContext = { runAsNonRoot: false }), field: 'spec.podSecurityContext.runAsNonRoot', schemaRejects: false },
  { name: 'spec.image with whitespace', mutate: (o) => (o.spec.image = 'busybox latest'), field: 'spec.image', schemaRejects: true },
  { name: 'spec.image empty', mutate: (o) => { pvcSource(o); o.spec.image = ''; }, field: 'spec.image', schemaRejects: true },
  { name: 'unknown spec field', mutate: (o) => (o.spec.schedul = '0 2 * * *'), field: 'spec.schedul', schemaRejects: false },
  { name: 'metadata.name missing', mutate: (o) => delete o.metadata.name, field: 'metadata.name', schemaRejects: false },
  { name: 'metadata.name uppercase', mutate: (o) => (o.metadata.name = 'Nightly'), field: 'metadata.name', schemaRejects: false },
  { name: 'apiVersion of another group', mutate: (o) => (o.apiVersion = 'example.com/v1'), field: 'apiVersion', schemaRejects: false },
  { name: 'kind of another resource', mutate: (o) => (o.kind = 'CronJob'), field: 'kind', schemaRejects: false },
  { name: 'status.conditions entry without status', mutate: (o) => (o.status = { conditions: [{ type: 'Ready', reason: 'X', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }] }), field: 'status.conditions[0].status', schemaRejects: true },
  { name: 'status.lastScheduleTime not a date-time', mutate: (o) => (o.status = { lastScheduleTime: 'yesterday' }), field: 'status.lastScheduleTime', schemaRejects: true },
];
