/**
 * The invalid BackupSchedules of R5, each with the field its rejection must name: wrong types,
 * out-of-range numbers, bad cron expressions and zones, unknown fields, and names at and past the
 * limits. `spec` is merged over a valid spec (`null` removes a field).
 */

/** One invalid input. */
export interface BadInput {
  /** Short label, also the base of the object's name. */
  readonly label: string;
  /** Fields merged over the valid spec; a `null` value deletes that field. */
  readonly spec?: Record<string, unknown>;
  /** Replaces the object's name (for the name cases). */
  readonly name?: string;
  /** The dotted path the 422 or the Ready=False message must name. */
  readonly field: string;
  /** Only through the API (storage accepts any name, and a name is no spec for the controller to judge). */
  readonly apiOnly?: boolean;
}

// v1 (the version the harness writes): a source union names its member in `type`.
const etcd = (endpoints: unknown, extra: Record<string, unknown> = {}) => ({ source: { type: 'Etcd', etcd: { endpoints, ...extra } } });
const pvcSource = (claimName: string) => ({ source: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName } } });
const pvcDest = (dest: Record<string, unknown>) => ({ destination: { persistentVolumeClaim: dest } });

/** The cases; ≥ 50 of them. */
export const BAD_INPUTS: readonly BadInput[] = [
  // schedule
  { label: 'schedule-empty', spec: { schedule: '' }, field: 'spec.schedule' },
  { label: 'schedule-words', spec: { schedule: 'every night' }, field: 'spec.schedule' },
  { label: 'schedule-minute-60', spec: { schedule: '60 2 * * *' }, field: 'spec.schedule' },
  { label: 'schedule-hour-24', spec: { schedule: '0 24 * * *' }, field: 'spec.schedule' },
  { label: 'schedule-day-32', spec: { schedule: '0 2 32 * *' }, field: 'spec.schedule' },
  { label: 'schedule-month-13', spec: { schedule: '0 2 * 13 *' }, field: 'spec.schedule' },
  { label: 'schedule-dow-8', spec: { schedule: '0 2 * * 8' }, field: 'spec.schedule' },
  { label: 'schedule-six-fields', spec: { schedule: '0 0 2 * * *' }, field: 'spec.schedule' },
  { label: 'schedule-tz-prefix', spec: { schedule: 'TZ=UTC 0 2 * * *' }, field: 'spec.schedule' },
  { label: 'schedule-bad-macro', spec: { schedule: '@fortnightly' }, field: 'spec.schedule' },
  { label: 'schedule-number', spec: { schedule: 42 }, field: 'spec.schedule' },
  { label: 'schedule-missing', spec: { schedule: null }, field: 'spec.schedule' },
  { label: 'schedule-reversed-range', spec: { schedule: '0 5-2 * * *' }, field: 'spec.schedule' },
  // timeZone
  { label: 'zone-unknown', spec: { timeZone: 'Mars/Olympus_Mons' }, field: 'spec.timeZone' },
  { label: 'zone-lowercase', spec: { timeZone: 'europe/berlin' }, field: 'spec.timeZone' },
  { label: 'zone-empty', spec: { timeZone: '' }, field: 'spec.timeZone' },
  { label: 'zone-number', spec: { timeZone: 1 }, field: 'spec.timeZone' },
  { label: 'zone-offset', spec: { timeZone: '+02:00' }, field: 'spec.timeZone' },
  // suspend
  { label: 'suspend-string', spec: { suspend: 'yes' }, field: 'spec.suspend' },
  // source
  { label: 'source-none', spec: { source: {} }, field: 'spec.source' },
  { label: 'source-both', spec: { source: { type: 'Etcd', etcd: { endpoints: ['https://etcd:2379'] }, persistentVolumeClaim: { claimName: 'data' } } }, field: 'spec.source' },
  { label: 'source-type-mismatch', spec: { source: { type: 'PersistentVolumeClaim', etcd: { endpoints: ['https://etcd:2379'] } } }, field: 'spec.source' },
  { label: 'source-type-unknown', spec: { source: { type: 'S3', etcd: { endpoints: ['https://etcd:2379'] } } }, field: 'spec.source.type' },
  { label: 'source-missing', spec: { source: null }, field: 'spec.source' },
  { label: 'etcd-no-endpoints', spec: etcd([]), field: 'spec.source.etcd.endpoints' },
  { label: 'etcd-endpoints-string', spec: etcd('https://etcd:2379'), field: 'spec.source.etcd.endpoints' },
  { label: 'etcd-endpoint-ftp', spec: etcd(['ftp://etcd:2379']), field: 'spec.source.etcd.endpoints' },
  { label: 'etcd-endpoint-number', spec: etcd([2379]), field: 'spec.source.etcd.endpoints' },
  { label: 'etcd-tls-secret-bad', spec: etcd(['https://etcd:2379'], { tlsSecretName: 'Not_A_Name' }), field: 'spec.source.etcd.tlsSecretName' },
  { label: 'pvc-source-empty', spec: pvcSource(''), field: 'spec.source.persistentVolumeClaim.claimName' },
  { label: 'pvc-source-upper', spec: pvcSource('DATA'), field: 'spec.source.persistentVolumeClaim.claimName' },
  // destination
  { label: 'destination-missing', spec: { destination: null }, field: 'spec.destination' },
  { label: 'destination-no-claim', spec: pvcDest({}), field: 'spec.destination.persistentVolumeClaim.claimName' },
  { label: 'destination-claim-number', spec: pvcDest({ claimName: 7 }), field: 'spec.destination.persistentVolumeClaim.claimName' },
  { label: 'destination-path-number', spec: pvcDest({ claimName: 'backups', path: 5 }), field: 'spec.destination.persistentVolumeClaim.path' },
  // retention
  { label: 'keeplast-zero', spec: { retention: { keepLast: 0 } }, field: 'spec.retention.keepLast' },
  { label: 'keeplast-negative', spec: { retention: { keepLast: -3 } }, field: 'spec.retention.keepLast' },
  { label: 'keeplast-huge', spec: { retention: { keepLast: 1_000_000 } }, field: 'spec.retention.keepLast' },
  { label: 'keeplast-string', spec: { retention: { keepLast: 'seven' } }, field: 'spec.retention.keepLast' },
  { label: 'keeplast-fraction', spec: { retention: { keepLast: 1.5 } }, field: 'spec.retention.keepLast' },
  { label: 'retention-no-rule', spec: { retention: {} }, field: 'spec.retention' },
  { label: 'keepdaily-zero', spec: { retention: { keepDaily: 0 } }, field: 'spec.retention.keepDaily' },
  { label: 'keepweekly-huge', spec: { retention: { keepWeekly: 5000 } }, field: 'spec.retention.keepWeekly' },
  { label: 'keepmonthly-string', spec: { retention: { keepLast: 3, keepMonthly: 'all' } }, field: 'spec.retention.keepMonthly' },
  // job knobs
  { label: 'concurrency-unknown', spec: { concurrencyPolicy: 'Sometimes' }, field: 'spec.concurrencyPolicy' },
  { label: 'concurrency-number', spec: { concurrencyPolicy: 1 }, field: 'spec.concurrencyPolicy' },
  { label: 'deadline-negative', spec: { startingDeadlineSeconds: -5 }, field: 'spec.startingDeadlineSeconds' },
  { label: 'deadline-string', spec: { startingDeadlineSeconds: 'soon' }, field: 'spec.startingDeadlineSeconds' },
  { label: 'success-history-negative', spec: { successfulJobsHistoryLimit: -1 }, field: 'spec.successfulJobsHistoryLimit' },
  { label: 'failed-history-negative', spec: { failedJobsHistoryLimit: -1 }, field: 'spec.failedJobsHistoryLimit' },
  { label: 'backoff-negative', spec: { backoffLimit: -1 }, field: 'spec.backoffLimit' },
  { label: 'backoff-string', spec: { backoffLimit: 'x' }, field: 'spec.backoffLimit' },
  { label: 'active-deadline-zero', spec: { activeDeadlineSeconds: 0 }, field: 'spec.activeDeadlineSeconds' },
  { label: 'cpu-words', spec: { resources: { requests: { cpu: 'lots' } } }, field: 'spec.resources.requests.cpu' },
  { label: 'memory-negative', spec: { resources: { limits: { memory: '-1Gi' } } }, field: 'spec.resources.limits.memory' },
  { label: 'requests-over-limits', spec: { resources: { requests: { memory: '2Gi' }, limits: { memory: '1Gi' } } }, field: 'spec.resources' },
  { label: 'image-spaces', spec: { image: 'not an image' }, field: 'spec.image' },
  { label: 'image-number', spec: { image: 5 }, field: 'spec.image' },
  // unknown fields (kubectl sends fieldValidation=Strict; through storage nothing prunes them)
  { label: 'unknown-spec-field', spec: { schedul: '0 3 * * *' }, field: 'spec.schedul' },
  { label: 'unknown-nested-field', spec: { retention: { keepLast: 3, keepFirst: 1 } }, field: 'spec.retention.keepFirst' },
  { label: 'unknown-etcd-field', spec: etcd(['https://etcd:2379'], { password: 'x' }), field: 'spec.source.etcd.password' },
  // names past the limits
  { label: 'name-too-long', name: `n${'x'.repeat(253)}`, field: 'metadata.name', apiOnly: true },
  { label: 'name-uppercase', name: 'Nightly-Etcd', field: 'metadata.name', apiOnly: true },
  { label: 'name-underscore', name: 'nightly_etcd', field: 'metadata.name', apiOnly: true },
];

/** Valid names at the limits: their children must be valid too (≤ 52 characters, a valid label). */
export const LIMIT_NAMES: readonly string[] = [
  'x'.repeat(253),
  `a${'-b'.repeat(126)}`,
  `${'y'.repeat(52)}`,
  `${'z'.repeat(53)}`,
  `d.${'e'.repeat(60)}.f`,
];
