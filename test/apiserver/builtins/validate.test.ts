import { describe, expect, it } from 'vitest';
import type { KubeObject, StatusCause } from '../../../src/kube/object.ts';
import { loadStatus } from '../../fixtures/k8s-reference.ts';
import { CronPanic } from './cron-schedule.ts';
import { applyBuiltinDefaults } from './defaults.ts';
import { validateBuiltin } from './validate.ts';

/** A CronJob as a client sends it, defaulted the way the server does before validating. */
const cronJob = (name: string, spec: Record<string, unknown> = {}, podSpec: Record<string, unknown> = {}): KubeObject => {
  const cj: KubeObject = {
    metadata: { name, namespace: 'kubelings' },
    spec: { schedule: '0 2 * * *', jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], restartPolicy: 'OnFailure', ...podSpec } } } }, ...spec },
  };
  applyBuiltinDefaults('batch', 'cronjobs', cj);
  return cj;
};

describe('validateBuiltin for CronJobs', () => {
  it('accepts a defaulted valid CronJob', () => {
    expect(validateBuiltin('batch', 'cronjobs', cronJob('ok'))).toEqual([]);
  });

  it('reports the causes of error-422-cronjob-invalid.json (schedule text from robfig/cron v3)', () => {
    const recorded = loadStatus('error-422-cronjob-invalid.json').details?.causes ?? [];
    const cj = cronJob('bad', { schedule: 'not a cron' }, { containers: [{ name: 'c' }], restartPolicy: undefined });
    const causes = validateBuiltin('batch', 'cronjobs', cj);
    // Kubernetes 1.20 used robfig/cron v1 ("Expected exactly 5 fields, found 3: not a cron"); current
    // releases use v3, which lower-cases the text and prints the fields as a Go slice.
    expect(causes[0]).toEqual({ ...recorded[0], message: 'Invalid value: "not a cron": expected exactly 5 fields, found 3: [not a cron]' });
    expect(causes.slice(1)).toEqual(recorded.slice(1));
  });

  it('reports a name over 52 characters exactly as error-422-cronjob-name-too-long.json', () => {
    const recorded = loadStatus('error-422-cronjob-name-too-long.json');
    const name = recorded.details?.name ?? '';
    expect(validateBuiltin('batch', 'cronjobs', cronJob(name))).toEqual(recorded.details?.causes);
  });

  it('allows an existing CronJob with a long name to be updated', () => {
    const long = 'a'.repeat(60);
    expect(validateBuiltin('batch', 'cronjobs', cronJob(long), cronJob(long))).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, StatusCause]>([
    ['an unknown descriptor', { schedule: '@often' }, { reason: 'FieldValueInvalid', field: 'spec.schedule', message: 'Invalid value: "@often": unrecognized descriptor: @often' }],
    ['a minute out of range', { schedule: '60 * * * *' }, { reason: 'FieldValueInvalid', field: 'spec.schedule', message: 'Invalid value: "60 * * * *": end of range (60) above maximum (59): 60' }],
    ['a non-number', { schedule: 'x * * * *' }, { reason: 'FieldValueInvalid', field: 'spec.schedule', message: 'Invalid value: "x * * * *": failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax' }],
    ['a reversed range', { schedule: '* 5-2 * * *' }, { reason: 'FieldValueInvalid', field: 'spec.schedule', message: 'Invalid value: "* 5-2 * * *": beginning of range (5) beyond end of range (2): 5-2' }],
    ['a zero step', { schedule: '*/0 * * * *' }, { reason: 'FieldValueInvalid', field: 'spec.schedule', message: 'Invalid value: "*/0 * * * *": step of range should be a positive number: */0' }],
    ['a day of month 0', { schedule: '0 0 0 * *' }, { reason: 'FieldValueInvalid', field: 'spec.schedule', message: 'Invalid value: "0 0 0 * *": beginning of range (0) below minimum (1): 0' }],
    ['an unknown time zone', { timeZone: 'Mars/Olympus' }, { reason: 'FieldValueInvalid', field: 'spec.timeZone', message: 'Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus' }],
    ['a time zone with bad characters', { timeZone: 'Europe/../x' }, { reason: 'FieldValueInvalid', field: 'spec.timeZone', message: 'Invalid value: "Europe/../x": unknown time zone Europe/../x' }],
    ['an empty time zone', { timeZone: '' }, { reason: 'FieldValueInvalid', field: 'spec.timeZone', message: 'Invalid value: "": timeZone must be nil or non-empty string' }],
    ['an unknown concurrencyPolicy', { concurrencyPolicy: 'Sometimes' }, { reason: 'FieldValueNotSupported', field: 'spec.concurrencyPolicy', message: 'Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"' }],
    ['a negative history limit', { failedJobsHistoryLimit: -1 }, { reason: 'FieldValueInvalid', field: 'spec.failedJobsHistoryLimit', message: 'Invalid value: -1: must be greater than or equal to 0' }],
    ['a negative startingDeadlineSeconds', { startingDeadlineSeconds: -5 }, { reason: 'FieldValueInvalid', field: 'spec.startingDeadlineSeconds', message: 'Invalid value: -5: must be greater than or equal to 0' }],
    ['day of week 7', { schedule: '0 2 * * 7' }, { reason: 'FieldValueInvalid', field: 'spec.schedule', message: 'Invalid value: "0 2 * * 7": end of range (7) above maximum (6): 7' }],
    ['a range of days of week to 7', { schedule: '0 2 * * SUN-7' }, { reason: 'FieldValueInvalid', field: 'spec.schedule', message: 'Invalid value: "0 2 * * SUN-7": end of range (7) above maximum (6): SUN-7' }],
    ['L for the last day', { schedule: '0 2 L * *' }, { reason: 'FieldValueInvalid', field: 'spec.schedule', message: 'Invalid value: "0 2 L * *": failed to parse int from L: strconv.Atoi: parsing "L": invalid syntax' }],
    ['# for the nth weekday', { schedule: '0 2 * * 1#2' }, { reason: 'FieldValueInvalid', field: 'spec.schedule', message: 'Invalid value: "0 2 * * 1#2": failed to parse int from 1#2: strconv.Atoi: parsing "1#2": invalid syntax' }],
    ['a time zone in lower case', { timeZone: 'utc' }, { reason: 'FieldValueInvalid', field: 'spec.timeZone', message: 'Invalid value: "utc": unknown time zone utc' }],
    ['a time zone in the wrong case', { timeZone: 'europe/berlin' }, { reason: 'FieldValueInvalid', field: 'spec.timeZone', message: 'Invalid value: "europe/berlin": unknown time zone europe/berlin' }],
    ['a time zone removed from tzdata', { timeZone: 'US/Pacific-New' }, { reason: 'FieldValueInvalid', field: 'spec.timeZone', message: 'Invalid value: "US/Pacific-New": unknown time zone US/Pacific-New' }],
    ['TZ in the schedule', { schedule: 'CRON_TZ=UTC 0 * * * *' }, { reason: 'FieldValueInvalid', field: 'spec.schedule', message: 'Invalid value: "CRON_TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead' }],
  ])('rejects %s', (_name, spec, expected) => {
    expect(validateBuiltin('batch', 'cronjobs', cronJob('c', spec))).toEqual([expected]);
  });

  it.each(['@hourly', '@every 1h30m', '*/15 * * * *', '0 9-17/2 * jan-jun mon-fri', '0 0 1,15 * ?', '5 4 * * sun', '0 0 30 2 *', '0 0 31 4 *', '0 2 * * +1', '0 2 1,,15 * *', '0\u00a02 * * *'])(
    'accepts the schedule %j',
    (schedule) => {
      expect(validateBuiltin('batch', 'cronjobs', cronJob('c', { schedule, timeZone: 'Europe/Berlin' }))).toEqual([]);
    },
  );

  it.each(['US/Pacific', 'Etc/UTC', 'UTC', 'Asia/Calcutta', 'America/Argentina/ComodRivadavia'])('accepts the tz database name %j, links included', (timeZone) => {
    expect(validateBuiltin('batch', 'cronjobs', cronJob('c', { timeZone }))).toEqual([]);
  });

  it('throws where robfig/cron panics (TZ= without a space), which kube-apiserver answers with a 500', () => {
    expect(() => validateBuiltin('batch', 'cronjobs', cronJob('c', { schedule: 'TZ=UTC' }))).toThrow(CronPanic);
  });

  it.each<[string, Record<string, unknown>, StatusCause]>([
    ['restartPolicy Always', { restartPolicy: 'Always' }, { reason: 'FieldValueRequired', field: 'spec.jobTemplate.spec.template.spec.restartPolicy', message: 'Required value: valid values: "OnFailure", "Never"' }],
    ['an unknown restartPolicy', { restartPolicy: 'Sometimes' }, { reason: 'FieldValueNotSupported', field: 'spec.jobTemplate.spec.template.spec.restartPolicy', message: 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"' }],
    ['no containers', { containers: [] }, { reason: 'FieldValueRequired', field: 'spec.jobTemplate.spec.template.spec.containers', message: 'Required value' }],
    ['a port out of range', { containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 70000 }] }] }, { reason: 'FieldValueInvalid', field: 'spec.jobTemplate.spec.template.spec.containers[0].ports[0].containerPort', message: 'Invalid value: 70000: must be between 1 and 65535, inclusive' }],
    ['a negative limit', { containers: [{ name: 'c', image: 'i', resources: { limits: { memory: '-1Gi' } } }] }, { reason: 'FieldValueInvalid', field: 'spec.jobTemplate.spec.template.spec.containers[0].resources.limits[memory]', message: 'Invalid value: "-1Gi": must be greater than or equal to 0' }],
    ['a request above its limit', { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '1001m' }, limits: { cpu: '1' } } }] }, { reason: 'FieldValueInvalid', field: 'spec.jobTemplate.spec.template.spec.containers[0].resources.requests', message: 'Invalid value: "1001m": must be less than or equal to cpu limit of 1' }],
    ['a mount of an undeclared volume', { containers: [{ name: 'c', image: 'i', volumeMounts: [{ name: 'v', mountPath: '/v' }] }] }, { reason: 'FieldValueNotFound', field: 'spec.jobTemplate.spec.template.spec.containers[0].volumeMounts[0].name', message: 'Not found: "v"' }],
  ])('rejects a pod template with %s', (_name, podSpec, expected) => {
    const causes = validateBuiltin('batch', 'cronjobs', cronJob('c', {}, podSpec));
    expect(causes).toContainEqual(expected);
  });

  it('rejects duplicate container names and bad container names', () => {
    const causes = validateBuiltin('batch', 'cronjobs', cronJob('c', {}, { containers: [{ name: 'a', image: 'i' }, { name: 'a', image: 'i' }, { name: 'B_', image: 'i' }] }));
    expect(causes.map((c) => [c.reason, c.field])).toEqual([
      ['FieldValueDuplicate', 'spec.jobTemplate.spec.template.spec.containers[1].name'],
      ['FieldValueInvalid', 'spec.jobTemplate.spec.template.spec.containers[2].name'],
    ]);
  });
});

describe('podFailurePolicy on a CronJob job template', () => {
  const withPolicy = (podFailurePolicy: unknown, podSpec: Record<string, unknown> = { restartPolicy: 'Never' }): KubeObject =>
    cronJob('c', { jobTemplate: { spec: { podFailurePolicy, template: { spec: { containers: [{ name: 'backup', image: 'i' }], ...podSpec } } } } });

  it('accepts a FailJob rule on exit codes of a named container, and defaults an onPodConditions status to True', () => {
    const cj = withPolicy({ rules: [{ action: 'FailJob', onExitCodes: { containerName: 'backup', operator: 'In', values: [3, 4] } }, { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] });
    expect(validateBuiltin('batch', 'cronjobs', cj)).toEqual([]);
    const policy = (cj['spec'] as { jobTemplate: { spec: { podFailurePolicy: { rules: { onPodConditions?: unknown[] }[] } } } }).jobTemplate.spec.podFailurePolicy;
    expect(policy.rules[1]!.onPodConditions).toEqual([{ type: 'DisruptionTarget', status: 'True' }]);
  });

  it.each([
    ['restartPolicy OnFailure', { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [3] } }] }, { restartPolicy: 'OnFailure' }, { reason: 'FieldValueInvalid', field: 'spec.jobTemplate.spec.template.spec.restartPolicy', message: 'Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified' }],
    ['an unknown container', { rules: [{ action: 'FailJob', onExitCodes: { containerName: 'other', operator: 'In', values: [3] } }] }, undefined, { reason: 'FieldValueInvalid', field: 'spec.jobTemplate.spec.podFailurePolicy.rules[0].onExitCodes.containerName', message: 'Invalid value: "other": must be one of the container or initContainer names in the pod template' }],
    ['exit code 0 with In', { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [0, 3] } }] }, undefined, { reason: 'FieldValueInvalid', field: 'spec.jobTemplate.spec.podFailurePolicy.rules[0].onExitCodes.values[0]', message: 'Invalid value: 0: must not be 0 for the In operator' }],
    ['unordered values', { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [4, 3] } }] }, undefined, { reason: 'FieldValueInvalid', field: 'spec.jobTemplate.spec.podFailurePolicy.rules[0].onExitCodes.values', message: 'Invalid value: [4,3]: must be ordered' }],
    ['an unknown action', { rules: [{ action: 'Retry', onExitCodes: { operator: 'In', values: [3] } }] }, undefined, { reason: 'FieldValueNotSupported', field: 'spec.jobTemplate.spec.podFailurePolicy.rules[0].action', message: 'Unsupported value: "Retry": supported values: "Count", "FailIndex", "FailJob", "Ignore"' }],
    ['a rule with no requirement', { rules: [{ action: 'FailJob' }] }, undefined, { reason: 'FieldValueInvalid', field: 'spec.jobTemplate.spec.podFailurePolicy.rules[0]', message: 'Invalid value: specifying one of OnExitCodes and OnPodConditions is required' }],
  ])('rejects %s', (_name, policy, podSpec, expected) => {
    expect(validateBuiltin('batch', 'cronjobs', withPolicy(policy, podSpec))).toContainEqual(expected);
  });
});

describe('validateBuiltin for Jobs and Leases', () => {
  it('checks the job spec counters and the template restartPolicy', () => {
    const job: KubeObject = { metadata: { name: 'j' }, spec: { backoffLimit: -1, template: { spec: { containers: [{ name: 'c', image: 'i' }] } } } };
    applyBuiltinDefaults('batch', 'jobs', job);
    expect(validateBuiltin('batch', 'jobs', job)).toEqual([
      { reason: 'FieldValueInvalid', field: 'spec.backoffLimit', message: 'Invalid value: -1: must be greater than or equal to 0' },
      { reason: 'FieldValueRequired', field: 'spec.template.spec.restartPolicy', message: 'Required value: valid values: "OnFailure", "Never"' },
    ]);
  });

  it.each<[Record<string, unknown>, StatusCause[]]>([
    [{ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 }, []],
    [{ leaseDurationSeconds: 0 }, [{ reason: 'FieldValueInvalid', field: 'spec.leaseDurationSeconds', message: 'Invalid value: 0: must be greater than 0' }]],
    [{ leaseTransitions: -1 }, [{ reason: 'FieldValueInvalid', field: 'spec.leaseTransitions', message: 'Invalid value: -1: must be greater than or equal to 0' }]],
  ])('validates the lease spec %j', (spec, expected) => {
    expect(validateBuiltin('coordination.k8s.io', 'leases', { metadata: { name: 'op-leader' }, spec })).toEqual(expected);
  });

  it('requires a CRD to be named plural.group', () => {
    const crd: KubeObject = { metadata: { name: 'widgets.example.com' }, spec: { group: 'fixtures.example.com', names: { plural: 'widgets' } } };
    expect(validateBuiltin('apiextensions.k8s.io', 'customresourcedefinitions', crd)).toEqual([
      { reason: 'FieldValueInvalid', field: 'metadata.name', message: 'Invalid value: "widgets.example.com": must be spec.names.plural+"."+spec.group' },
    ]);
  });
});
