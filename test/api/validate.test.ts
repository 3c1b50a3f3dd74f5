import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { API_VERSION, API_VERSION_V1, GROUP_VERSION_V1, validateAnyVersion, validateBackupSchedule, validateBackupScheduleV1 } from '../../src/api/index.ts';
import { nightlyEtcd } from '../../src/manifests/index.ts';
import { crdValidator } from '../manifests/dist-files.ts';
import { INVALID_CASES, validSchedule } from './invalid-cases.ts';

const GOLDEN_INPUTS = new URL('../golden/inputs/', import.meta.url).pathname;
const goldenInputs = readdirSync(GOLDEN_INPUTS).sort().map((file) => [file, parse(readFileSync(GOLDEN_INPUTS + file, 'utf8'))] as const);

describe('validateBackupSchedule', () => {
  it('accepts the base schedule of the invalid corpus', () => {
    expect(validateBackupSchedule(validSchedule())).toEqual([]);
  });

  it('accepts the example nightly-etcd schedule, written in v1', () => {
    expect(validateBackupScheduleV1(nightlyEtcd('kubelings'))).toEqual([]);
  });

  it.each(goldenInputs)('accepts golden input %s in its own version', (_file, input) => {
    expect(validateAnyVersion(input)).toEqual([]);
  });

  it('has a corpus of at least 30 invalid schedules', () => {
    expect(INVALID_CASES.length).toBeGreaterThanOrEqual(30);
  });

  it.each(INVALID_CASES.map((c) => [c.name, c] as const))('rejects %s with a message naming the field', (_name, c) => {
    const input = validSchedule();
    c.mutate(input);
    const errors = validateBackupSchedule(input);
    const hit = errors.find((e) => e.field === c.field);
    expect(hit, `errors were ${JSON.stringify(errors)}`).toBeDefined();
    expect(hit?.message.startsWith(`${c.field}: `)).toBe(true);
    expect(hit?.message.length).toBeGreaterThan(c.field.length + 5);
  });

  it.each([null, 'text', 42, []])('rejects the non-object %j at the root', (input) => {
    expect(validateBackupSchedule(input)).toEqual([{ field: '(root)', message: '(root): must be an object' }]);
  });

  it('reports every problem at once, not only the first', () => {
    const input = validSchedule();
    input['spec'].retention.keepLast = 0;
    input['spec'].concurrencyPolicy = 'Sometimes';
    expect(validateBackupSchedule(input).map((e) => e.field).sort()).toEqual(['spec.concurrencyPolicy', 'spec.retention.keepLast']);
  });

  it.each([['https://etcd-0.etcd.kube-system.svc:2379'], ['http://10.0.0.1:2379/'], ['https://[fd00::1]:2379'], ['https://etcd']])('accepts the etcd endpoint %s', (endpoint) => {
    const input = validSchedule();
    input['spec'].source.etcd = { endpoints: [endpoint] };
    expect(validateBackupSchedule(input)).toEqual([]);
  });

  it.each([['https://a:1,b:2'], ['https://a:1 https://b:2'], ['https://user@etcd:2379'], ['https://etcd:2379?x=1'], ['https://-etcd:2379']])('rejects the etcd endpoint %s', (endpoint) => {
    const input = validSchedule();
    input['spec'].source.etcd = { endpoints: [endpoint] };
    expect(validateBackupSchedule(input).map((e) => e.field)).toEqual(['spec.source.etcd.endpoints[0]']);
  });

  it.each<[string, (o: Record<string, any>) => void, string]>([
    ['a negative limit', (o) => (o.spec.resources = { limits: { memory: '-1Gi' } }), 'spec.resources.limits.memory: must be greater than or equal to 0, got "-1Gi"'],
    [
      'a fractional exponent',
      (o) => (o.spec.resources = { requests: { cpu: '1e1.5' } }),
      `spec.resources.requests.cpu: invalid quantity "1e1.5": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'; write a number with an optional suffix, e.g. "512Mi", "1Gi" or "500m"`,
    ],
    ['zero without a digit', (o) => (o.spec.resources = { requests: { cpu: '+' } }), 'spec.resources.requests.cpu: must be a non-negative quantity written with digits, got "+"; write a number with an optional suffix, e.g. "512Mi", "1Gi" or "500m"'],
    ['a long tz name part', (o) => (o.spec.timeZone = 'America/Argentina_Buenos_Aires'), 'spec.timeZone: unknown time zone America/Argentina_Buenos_Aires; did you mean "America/Argentina/Buenos_Aires"? (IANA names, case-sensitive)'],
    [
      'comma-joined endpoints',
      (o) => (o.spec.source.etcd.endpoints = ['https://a:1,b:2']),
      'spec.source.etcd.endpoints[0]: must be one http:// or https:// URL of a single host (DNS name, IPv4 or [IPv6]) with an optional port, e.g. "https://etcd-0.etcd:2379", got "https://a:1,b:2"',
    ],
  ])('words the pattern failure of %s instead of printing the regex', (_name, mutate, message) => {
    const input = validSchedule();
    mutate(input);
    expect(validateBackupSchedule(input).map((e) => e.message)).toEqual([message]);
  });

  it('accepts @midnight like the CronJob controller does', () => {
    const input = validSchedule();
    input['spec'].schedule = '@midnight';
    expect(validateBackupSchedule(input)).toEqual([]);
  });
});

describe('the synthesized CRD openAPIV3Schema', () => {
  const validate = crdValidator();
  const validateV1 = crdValidator(undefined, API_VERSION_V1);

  it('accepts the example and every golden input in the version it is written in', () => {
    for (const input of [nightlyEtcd('kubelings'), ...goldenInputs.map(([, i]) => i)]) {
      const check = (input as { apiVersion?: string }).apiVersion === GROUP_VERSION_V1 ? validateV1 : validate;
      expect(check(input), JSON.stringify(check.errors)).toBe(true);
    }
    expect(API_VERSION).toBe('v1alpha1');
  });

  it.each(INVALID_CASES.filter((c) => c.schemaRejects).map((c) => [c.name, c] as const))('rejects %s', (_name, c) => {
    const input = validSchedule();
    c.mutate(input);
    expect(validate(input)).toBe(false);
  });
});
