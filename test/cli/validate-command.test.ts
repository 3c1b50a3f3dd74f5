import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { ValidateReport } from '../../src/cli/validate-command.ts';
import { INVALID_CASES, validSchedule } from '../api/invalid-cases.ts';
import { cli } from './cli-io.ts';

const scratch = mkdtempSync(join(tmpdir(), 'cli-validate-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
function file(name: string, text: string): string {
  const path = join(scratch, name);
  writeFileSync(path, text);
  return path;
}

const BAD = `apiVersion: v1
kind: Namespace
metadata: {name: x}
---
apiVersion: kubelings.dev/v1alpha1
kind: BackupSchedule
metadata:
  name: bad
  namespace: team-a
spec:
  schedule: "0 25 * * *"
  timeZone: Mars/Base
  source:
    etcd:
      endpoints: ["http://e:2379"]
      tlsSecretName: s
  destination:
    persistentVolumeClaim:
      claimName: b
  retention:
    keepLast: 5000
  keeplast: 3
`;

/** A BackupSchedule document of `apiVersion` named `name`, its spec's lines after the schedule as given. */
const scheduleDoc = (apiVersion: string, name: string, ...specLines: string[]): string =>
  [`apiVersion: kubelings.dev/${apiVersion}`, 'kind: BackupSchedule', `metadata: {name: ${name}, namespace: team-a}`, 'spec:', '  schedule: "0 2 * * *"', ...specLines.map((l) => `  ${l}`), ''].join('\n');
const ETCD = 'etcd: {endpoints: ["https://e:2379"]}';
const DESTINATION = 'destination: {persistentVolumeClaim: {claimName: b}}';

/** Five schedules, v1alpha1 then v1, each wrong in a way only its own version names. */
const MIXED = [
  scheduleDoc('v1alpha1', 'alpha-with-type', 'source:', '  type: Etcd', `  ${ETCD}`, DESTINATION, 'retention:', '  keepLast: 3', '  keepDaily: 7'),
  scheduleDoc('v1', 'v1-without-type', 'source:', `  ${ETCD}`, DESTINATION),
  scheduleDoc('v1', 'v1-daily-zero', `source: {type: Etcd, ${ETCD}}`, DESTINATION, 'retention: {keepDaily: 0}'),
  scheduleDoc('v1', 'v1-wrong-member', 'source:', '  type: PersistentVolumeClaim', `  ${ETCD}`, DESTINATION),
  scheduleDoc('v1', 'v1-empty-retention', `source: {type: Etcd, ${ETCD}}`, DESTINATION, 'retention: {}'),
].join('---\n');

describe('backupschedule validate', () => {
  it('accepts the golden inputs (v1alpha1 and v1 in one folder) and dist/, counting the other kinds it skips', () => {
    const run = cli(['validate', 'test/golden/inputs', 'dist/examples', 'dist/00-namespace-backupschedule-system.yaml']);
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toBe('');
    // One schedule a golden input, plus the example; dist/examples also holds a Namespace, as does the third path.
    const goldens = readdirSync('test/golden/inputs').filter((f) => f.endsWith('.yaml')).length;
    expect(run.stderr).toBe(`${goldens + 1} BackupSchedule(s) in ${goldens + 3} file(s), 2 other object(s) skipped: all valid\n`);
  });

  it('checks each document of a mixed file in its own version, naming fields as that version has them', () => {
    const path = file('mixed.yaml', MIXED);
    const run = cli(['validate', path]);
    expect(run.code).toBe(1);
    const unchecked = 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';
    expect(run.stdout.split('\n')).toEqual([
      `${path}:7: team-a/alpha-with-type: spec.source.type: is not a known field; this is a v1 field: set apiVersion: kubelings.dev/v1`,
      `${path}:12: team-a/alpha-with-type: spec.retention.keepDaily: is not a known field; this is a v1 field: set apiVersion: kubelings.dev/v1`,
      `${path}:4: team-a/alpha-with-type: spec: ${unchecked} (also the rules of spec.source)`,
      `${path}:19: team-a/v1-without-type: spec.source.type: is required`,
      `${path}:17: team-a/v1-without-type: spec: ${unchecked} (also the rules of spec.source)`,
      `${path}:30: team-a/v1-daily-zero: spec.retention.keepDaily: must be >= 1`,
      `${path}:26: team-a/v1-daily-zero: spec: ${unchecked} (also the rules of spec.retention)`,
      `${path}:37: team-a/v1-wrong-member: spec.source.persistentVolumeClaim: persistentVolumeClaim must be set exactly when type is PersistentVolumeClaim`,
      `${path}:39: team-a/v1-wrong-member: spec.source.etcd: etcd must be set exactly when type is Etcd`,
      `${path}:49: team-a/v1-empty-retention: spec.retention: at least one of keepLast, keepDaily, keepWeekly, keepMonthly must be set`,
      '',
    ]);
    expect(run.stderr).toContain('5 BackupSchedule(s) in 1 file(s), 0 other object(s) skipped: 10 error(s)');
  });

  it('accepts a v1 schedule (GFS retention, source.type) next to a v1alpha1 one', () => {
    const alpha = validSchedule();
    const v1: Record<string, any> = { ...validSchedule(), apiVersion: 'kubelings.dev/v1', metadata: { name: 'gfs', namespace: 'team-a' } };
    v1.spec = { ...v1.spec, source: { type: 'Etcd', ...v1.spec.source }, retention: { keepDaily: 7, keepWeekly: 4, keepMonthly: 6 } };
    const run = cli(['validate', '-'], `${stringify(alpha)}---\n${stringify(v1)}`);
    expect(run.stdout).toBe('');
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('2 BackupSchedule(s)');
  });

  it.each(['kubelings.dev/v2', 'kubelings.dev/v1beta1', 'backup.example.com/v1'])('reports apiVersion %s as not served, listing both served versions, and nothing else', (apiVersion) => {
    const object: Record<string, any> = { ...validSchedule(), apiVersion };
    object.spec.source = { type: 'Etcd', ...object.spec.source };
    const run = cli(['validate', '-o', 'json', '-'], stringify(object));
    expect(run.code).toBe(1);
    expect((JSON.parse(run.stdout) as ValidateReport).errors).toEqual([
      { file: '<stdin>', line: 1, object: 'team-a/nightly', field: 'apiVersion', message: `apiVersion: must be one of "kubelings.dev/v1alpha1", "kubelings.dev/v1", got "${apiVersion}"` },
    ]);
  });

  it('prints file:line: namespace/name: field: message for every error, in file order, then the rules left unchecked, and exits 1', () => {
    const path = file('bad.yaml', BAD);
    const run = cli(['validate', path]);
    expect(run.code).toBe(1);
    expect(run.stdout.split('\n')).toEqual([
      `${path}:11: team-a/bad: spec.schedule: invalid cron schedule "0 25 * * *": end of range (25) above maximum (23): 25`,
      `${path}:12: team-a/bad: spec.timeZone: unknown time zone Mars/Base; use an IANA name such as "Europe/Berlin" (case-sensitive)`,
      `${path}:15: team-a/bad: spec.source.etcd.endpoints: endpoints must use https:// when tlsSecretName is set`,
      `${path}:21: team-a/bad: spec.retention.keepLast: must be <= 1000`,
      `${path}:22: team-a/bad: spec.keeplast: is not a known field`,
      `${path}:10: team-a/bad: spec: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
      '',
    ]);
    expect(run.stderr).toContain('1 BackupSchedule(s) in 1 file(s), 1 other object(s) skipped: 6 error(s)');
  });

  it('writes one JSON report with --output json', () => {
    const run = cli(['validate', '--output', 'json', file('bad2.yaml', BAD)]);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as ValidateReport;
    expect(report).toMatchObject({ valid: false, files: 1, backupSchedules: 1, skipped: 1 });
    expect(report.errors[3]).toEqual({ file: join(scratch, 'bad2.yaml'), line: 21, object: 'team-a/bad', field: 'spec.retention.keepLast', message: 'spec.retention.keepLast: must be <= 1000' });
  });

  it('reads standard input for -', () => {
    const run = cli(['validate', '-o', 'json', '-'], BAD);
    expect((JSON.parse(run.stdout) as ValidateReport).errors.map((e) => `${e.file}:${e.line}`)).toContain('<stdin>:21');
  });

  it('reads JSON files and the items of a List', () => {
    const bad = validSchedule();
    bad.spec.retention.keepLast = 0;
    const list = { apiVersion: 'v1', kind: 'List', items: [validSchedule(), bad] };
    const run = cli(['validate', file('list.json', JSON.stringify(list, null, 2))]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/list\.json:\d+: team-a\/nightly: spec\.retention\.keepLast: must be >= 1\n/);
    expect(run.stderr).toContain('2 BackupSchedule(s) in 1 file(s), 0 other object(s) skipped');
  });

  it('reports a document that is not YAML at its line', () => {
    const run = cli(['validate', file('broken.yaml', 'kind: BackupSchedule\nspec: [a\n')]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/broken\.yaml:\d+: not valid YAML: /);
  });

  // `kind` changed to another resource: the CLI skips such objects by design.
  const cases = INVALID_CASES.filter((c) => c.field !== 'kind');
  it.each(cases.map((c) => [c.name, c] as const))('names the field and its line for %s', (_name, c) => {
    const object = validSchedule();
    c.mutate(object);
    // Written as YAML 1.1, as kubectl reads it: `suspend: "yes"` must stay a string to be wrong.
    const text = stringify(object, { version: '1.1' });
    const run = cli(['validate', '-o', 'json', '-'], text);
    expect(run.code).toBe(1);
    const error = (JSON.parse(run.stdout) as ValidateReport).errors.find((e) => e.field === c.field);
    expect(error, run.stdout).toBeDefined();
    // The line holds the field's key, or that of its deepest parent present in the document.
    const lineText = text.split('\n')[(error?.line ?? 0) - 1] ?? '';
    let present = '';
    let node: unknown = object;
    for (const segment of c.field.split(/\.|\[|\]/).filter((s) => s !== '')) {
      if (node === null || typeof node !== 'object' || !(segment in node)) break;
      present = /^\d+$/.test(segment) ? '- ' : `${segment}:`;
      node = (node as Record<string, unknown>)[segment];
    }
    expect(Number.isInteger(error?.line) && (error?.line ?? 0) >= 1, `line ${String(error?.line)}`).toBe(true);
    // A top-level field that is missing altogether is reported on the document's first line.
    if (present === '') expect(error?.line).toBe(1);
    else expect(lineText.trim().startsWith(present), `${error?.line}: ${lineText} should hold ${present}`).toBe(true);
  });

  it.each([
    [['validate', '--bogus', 'x'], "Unknown option '--bogus'"],
    [['validate'], 'validate needs at least one file'],
    [['validate', '--output', 'xml', 'x'], '--output must be one of text, json'],
    [['validate', join(tmpdir(), 'no-such-file.yaml')], 'no such file or folder'],
    [['frobnicate'], 'unknown command "frobnicate"'],
    [[], 'Usage: backupschedule <command>'],
  ])('exits 2 with usage for %j', (argv, message) => {
    const run = cli(argv);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stderr).toContain('Usage: backupschedule');
  });

  it.each([[['--help']], [['validate', '--help']], [['preview', '-h']]])('prints help on stdout for %j and exits 0', (argv) => {
    const run = cli(argv);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: backupschedule/);
  });
});

describe('backupschedule validate: the carried v1 retention of a v1alpha1 document (issue 30)', () => {
  it.each([
    ['{"keepDaily":0,"keepWeekly":-5,"keepMonthly":99999999999}', ['keepDaily: must be >= 1', 'keepWeekly: must be >= 1', 'keepMonthly: must be <= 1000']],
    ['{"keepDaily":null}', ['keepDaily: must be integer']],
  ])('reports %s as errors naming the annotation key and the rule', (value, problems) => {
    const doc = [
      'apiVersion: kubelings.dev/v1alpha1',
      'kind: BackupSchedule',
      'metadata:',
      '  name: tenant',
      '  namespace: team-a',
      '  annotations:',
      `    kubelings.dev/v1-retention: '${value}'`,
      'spec:',
      '  schedule: "0 2 * * *"',
      `  source: {${ETCD}}`,
      `  ${DESTINATION}`,
      '  retention: {keepLast: 1000}',
      '',
    ].join('\n');
    const path = file('carried.yaml', doc);
    const run = cli(['validate', path]);
    expect(run.code).toBe(1);
    const lines = run.stdout.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(problems.length);
    // Line 6 holds `annotations:`; the object may be named before the field.
    for (const [i, problem] of problems.entries()) expect(lines[i]!.startsWith(`${path}:6: `) && lines[i]!.endsWith(`metadata.annotations.kubelings.dev/v1-retention: ${problem}`), lines[i]).toBe(true);
  });
});
