/**
 * The CLI's messages for the mistakes people make (issue 33): misspelt kinds and fields, a field of the
 * other version, rules hidden by a schema error, quantities and time zones, and the version, exit codes
 * and object names a CI log needs.
 */
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { OPERATOR_VERSION } from '../../src/pure/image.ts';
import type { ValidateReport } from '../../src/cli/validate-command.ts';
import { validSchedule } from '../api/invalid-cases.ts';
import { cli } from './cli-io.ts';

const report = (stdout: string): ValidateReport => JSON.parse(stdout) as ValidateReport;
const UNCHECKED = 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

describe('backupschedule validate messages', () => {
  it.each([
    ['kubelings.dev/v1', 'BackupSchedul', 'the kubelings.dev group has only BackupSchedule and Restore'],
    ['kubelings.dev/v1alpha1', 'backupschedule', 'the kubelings.dev group has only BackupSchedule and Restore'],
    ['kubelings.dev/v1', 'Backupschedules', 'the kubelings.dev group has only BackupSchedule and Restore'],
    ['backup.example.com/v1', 'backupschedule', 'kinds are case-sensitive and singular'],
  ])('reports apiVersion %s kind %s instead of skipping it', (apiVersion, kind, why) => {
    const run = cli(['validate', '-'], stringify({ ...validSchedule(), apiVersion, kind }));
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(`<stdin>:2: team-a/nightly: kind: "${kind}" is not a known kind (${why}); did you mean "BackupSchedule"?\n`);
    expect(run.stderr).toContain('0 BackupSchedule(s) in 1 file(s), 0 other object(s) skipped: 1 error(s)');
  });

  it('still skips the kinds of other groups, and of the core group', () => {
    const input = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: backup.example.com/v1\nkind: Schedule\nmetadata: {name: b}\n';
    const run = cli(['validate', '-'], input);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('0 BackupSchedule(s) in 1 file(s), 2 other object(s) skipped: all valid\n');
  });

  it('suggests the known field nearest an unknown one', () => {
    const schedule = validSchedule();
    schedule.spec.retension = schedule.spec.retention;
    delete schedule.spec.retention;
    schedule.spec.source.etcd.tlsSecretNmae = 'x';
    const errors = report(cli(['validate', '-o', 'json', '-'], stringify(schedule)).stdout).errors.map((e) => e.message);
    expect(errors).toContain('spec.retension: is not a known field; did you mean "retention"?');
    expect(errors).toContain('spec.source.etcd.tlsSecretNmae: is not a known field; did you mean "tlsSecretName"?');
  });

  it('names the version of a v1 field in a v1alpha1 object', () => {
    const alpha = validSchedule();
    alpha.spec.retention = { keepDaily: 7 };
    expect(report(cli(['validate', '-o', 'json', '-'], stringify(alpha)).stdout).errors.map((e) => e.message)).toContain(
      'spec.retention.keepDaily: is not a known field; this is a v1 field: set apiVersion: kubelings.dev/v1',
    );
  });

  it('says the cross-field rules were not checked when a schema error hid them, and reports them once it is fixed', () => {
    const schedule = validSchedule();
    schedule.spec.source = { persistentVolumeClaim: { claimName: 'same' } };
    schedule.spec.destination = { persistentVolumeClaim: { claimName: 'same' } };
    schedule.spec.retention.keepLast = 5000;
    const hidden = report(cli(['validate', '-o', 'json', '-'], stringify(schedule)).stdout).errors;
    expect(hidden.map((e) => e.message)).toEqual(['spec.retention.keepLast: must be <= 1000', `spec: ${UNCHECKED}`]);
    schedule.spec.retention.keepLast = 7;
    const shown = report(cli(['validate', '-o', 'json', '-'], stringify(schedule)).stdout).errors;
    expect(shown.map((e) => e.field)).toEqual(['spec.destination.persistentVolumeClaim.claimName']);
  });

  it('suggests the Kubernetes spelling of a quantity', () => {
    const schedule = validSchedule();
    schedule.spec.resources = { requests: { memory: '512MB', cpu: '1 core' }, limits: { memory: '1 Gi' } };
    const errors = report(cli(['validate', '-o', 'json', '-'], stringify(schedule)).stdout).errors.map((e) => e.message);
    expect(errors).toContain(
      `spec.resources.requests.memory: invalid quantity "512MB": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'; did you mean "512Mi" (2^20) or "512M" (10^6)?`,
    );
    expect(errors.find((e) => e.startsWith('spec.resources.limits.memory'))).toMatch(/; did you mean "1Gi"\?$/);
    expect(errors.find((e) => e.startsWith('spec.resources.requests.cpu'))).toMatch(/; write a number with an optional suffix, e\.g\. "512Mi", "1Gi" or "500m"$/);
  });

  it('names at most three time zones near a misspelt one', () => {
    const schedule = validSchedule();
    schedule.spec.timeZone = 'Europe/Berln';
    const run = cli(['validate', '-'], stringify(schedule));
    expect(run.stdout).toMatch(/^<stdin>:\d+: team-a\/nightly: spec\.timeZone: unknown time zone Europe\/Berln; did you mean "Europe\/Berlin"\? \(IANA names, case-sensitive\)\n$/);
  });

  it('prints namespace/name, or the name alone, after file:line', () => {
    const schedule = validSchedule();
    delete schedule.metadata.namespace;
    schedule.spec.retention.keepLast = 0;
    expect(cli(['validate', '-'], stringify(schedule)).stdout).toMatch(/^<stdin>:\d+: nightly: spec\.retention\.keepLast: must be >= 1\n/);
  });

  it('reports the same errors in the same order in preview as in validate', () => {
    const schedule = validSchedule();
    schedule.spec.schedule = '0 25 * * *';
    schedule.spec.keeplast = 3;
    schedule.spec.retention.keepLast = 5000;
    schedule.spec.source.etcd.endpoints = ['http://e:2379'];
    const yaml = stringify(schedule);
    const validate = cli(['validate', '-'], yaml);
    const preview = cli(['preview', '-'], yaml);
    expect(validate.stdout.split('\n').length).toBeGreaterThan(4);
    expect(preview.stderr).toBe(validate.stdout);
    const lines = validate.stdout.trim().split('\n').slice(0, -1).map((l) => Number(l.split(':')[1]));
    expect(lines).toEqual([...lines].sort((a, b) => a - b));
  });
});

describe('backupschedule --version and --help', () => {
  it.each([['--version'], ['-V'], ['version']])('prints the version for %s and exits 0', (flag) => {
    const run = cli([flag]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`backupschedule ${OPERATOR_VERSION} (kubelings.dev/v1alpha1, kubelings.dev/v1; tzdata 2025b)\n`);
  });

  it.each([[['--help']], [['validate', '--help']], [['preview', '--help']]])('documents the exit codes in %j', (argv) => {
    const { stdout } = cli(argv);
    expect(stdout).toMatch(/Exit status:/);
    for (const code of ['0', '1', '2']) expect(stdout).toMatch(new RegExp(`(^|\\s)${code}\\s+\\S`, 'm'));
  });
});
