import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import type { AnyBackupSchedule, BackupSchedule } from '../../src/api/index.ts';
import { toV1 } from '../../src/conversion/index.ts';
import { buildCronJob } from '../../src/pure/index.ts';
import { PREVIEW_UID, previewCronJob } from '../../src/pure/preview.ts';
import type { PreviewItem } from '../../src/cli/preview-command.ts';
import { validSchedule } from '../api/invalid-cases.ts';
import { cli } from './cli-io.ts';

const EXAMPLE = 'dist/examples/01-backupschedule-nightly-etcd.yaml';
const example = parse(readFileSync(EXAMPLE, 'utf8')) as AnyBackupSchedule;
const withUid = (s: AnyBackupSchedule): AnyBackupSchedule => ({ ...s, metadata: { ...s.metadata, uid: PREVIEW_UID } });
const argsOf = (doc: unknown): string[] => (doc as { spec: { jobTemplate: { spec: { template: { spec: { containers: { args: string[] }[] } } } } } }).spec.jobTemplate.spec.template.spec.containers[0]?.args ?? [];

/** Removes the lines marked as server defaults, leaving what the controller sends. */
const withoutDefaults = (yaml: string): string => yaml.split('\n').filter((l) => !l.endsWith('# default: set by the API server')).join('\n');

describe('backupschedule preview', () => {
  it('prints the CronJob buildCronJob makes, plus the server defaults marked as such', () => {
    const run = cli(['preview', EXAMPLE]);
    expect(run.code, run.stderr).toBe(0);
    const marked = run.stdout.split('\n').filter((l) => l.endsWith('# default: set by the API server')).map((l) => l.trim().split(':')[0]);
    expect(marked).toEqual(['terminationMessagePath', 'imagePullPolicy', 'terminationMessagePolicy', 'terminationGracePeriodSeconds', 'dnsPolicy', 'schedulerName']);
    expect(parse(withoutDefaults(run.stdout))).toEqual(buildCronJob(withUid(example)));
    expect(run.stdout).toContain('# CronJob of BackupSchedule kubelings/nightly-etcd (dist/examples/01-backupschedule-nightly-etcd.yaml:2)');
    expect(run.stdout).toMatchSnapshot();
  });

  it('previews the v1 example with its grandfather-father-son flags and a v1 ownerReference', () => {
    const run = cli(['preview', EXAMPLE]);
    const job = parse(withoutDefaults(run.stdout)) as ReturnType<typeof buildCronJob>;
    expect(argsOf(job).filter((a) => a.startsWith('--keep-'))).toEqual(['--keep-daily=7', '--keep-weekly=4', '--keep-monthly=6']);
    expect(job.metadata?.ownerReferences?.[0]?.apiVersion).toBe('kubelings.dev/v1');
  });

  it('previews v1alpha1 and v1 documents of one input, each through buildCronJob in its own version', () => {
    const alpha = validSchedule() as BackupSchedule;
    const v1 = toV1({ ...alpha, metadata: { name: 'monthly', namespace: 'team-a' } });
    v1.spec.retention = { keepMonthly: 12 };
    const run = cli(['preview', '-o', 'json', '-'], `${JSON.stringify(alpha)}\n---\n${JSON.stringify(v1)}\n`);
    expect(run.code, run.stderr).toBe(0);
    const { items } = JSON.parse(run.stdout) as { items: PreviewItem[] };
    expect(items.map((i) => i.cronJob)).toEqual([previewCronJob(alpha), previewCronJob(v1)]);
    expect(items.map((i) => argsOf(i.cronJob).filter((a) => a.startsWith('--keep-')))).toEqual([['--keep-last=7'], ['--keep-monthly=12']]);
    expect(items.map((i) => i.cronJob.metadata?.ownerReferences?.[0]?.apiVersion)).toEqual(['kubelings.dev/v1alpha1', 'kubelings.dev/v1']);
  });

  it('refuses a v1 schedule invalid in v1, naming the v1 field', () => {
    const v1 = toV1(validSchedule() as BackupSchedule) as unknown as Record<string, any>;
    delete v1['spec'].source.type;
    const run = cli(['preview', '-'], JSON.stringify(v1, null, 2));
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^<stdin>:\d+: team-a\/nightly: spec\.source\.type: is required\n<stdin>:\d+: team-a\/nightly: spec: some validation rules were not checked/);
  });

  it('refuses an apiVersion that is not served, listing both served versions', () => {
    const run = cli(['preview', '-'], JSON.stringify({ ...validSchedule(), apiVersion: 'kubelings.dev/v2' }));
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('<stdin>:1: team-a/nightly: apiVersion: must be one of "kubelings.dev/v1alpha1", "kubelings.dev/v1", got "kubelings.dev/v2"\n');
  });

  it('lists the CronJobs and their server defaults apart with --output json', () => {
    const run = cli(['preview', '--output', 'json', '--image', 'registry.local/backup:2', EXAMPLE]);
    const { items } = JSON.parse(run.stdout) as { items: PreviewItem[] };
    expect(items).toHaveLength(1);
    expect(items[0]?.cronJob).toEqual(previewCronJob(example, { image: 'registry.local/backup:2' }));
    expect(items[0]?.serverDefaults).toContainEqual({ field: 'spec.jobTemplate.spec.template.spec.containers[0].imagePullPolicy', value: 'IfNotPresent' });
    expect(items[0]?.serverDefaults).toContainEqual({ field: 'spec.jobTemplate.spec.template.spec.dnsPolicy', value: 'ClusterFirst' });
  });

  it('previews every BackupSchedule of a multi-document input, in a namespace it is given when they have none', () => {
    const a = validSchedule();
    delete a.metadata.namespace;
    const b = { ...validSchedule(), metadata: { name: 'other', namespace: 'team-b' } };
    const input = `${JSON.stringify(a)}\n---\nkind: ConfigMap\napiVersion: v1\nmetadata: {name: c}\n---\n${JSON.stringify(b)}\n`;
    const run = cli(['preview', '-n', 'team-z', '-'], input);
    expect(run.code, run.stderr).toBe(0);
    const docs = parseAllDocuments(run.stdout).map((d) => d.toJS() as { metadata: { namespace: string; name: string } });
    expect(docs.map((d) => `${d.metadata.namespace}/${d.metadata.name}`)).toEqual(['team-z/nightly', 'team-b/other']);
    expect(run.stdout).toContain('The BackupSchedule has no namespace: previewed in team-z.');
  });

  it('prints the errors of an invalid BackupSchedule instead, and exits 1', () => {
    const bad = validSchedule();
    bad.spec.retention.keepLast = 5000;
    const run = cli(['preview', '-'], `# comment\n${JSON.stringify(bad, null, 2)}`);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^<stdin>:\d+: team-a\/nightly: spec\.retention\.keepLast: must be <= 1000\n<stdin>:\d+: team-a\/nightly: spec: some validation rules were not checked/);
  });

  it('exits 1 when the input holds no BackupSchedule', () => {
    const run = cli(['preview', 'dist/00-namespace-backupschedule-system.yaml']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('no BackupSchedule in');
  });

  it('exits 2 on an unknown flag', () => {
    expect(cli(['preview', '--dry-run', EXAMPLE]).code).toBe(2);
  });
});

describe('backupschedule preview of a v1alpha1 document whose carried v1 retention is invalid (issue 30)', () => {
  it('prints no CronJob with --keep-weekly=-5: it names the annotation and the rule, and exits 1', () => {
    const doc = (value: string): string => ['apiVersion: kubelings.dev/v1alpha1', 'kind: BackupSchedule', 'metadata:', '  name: tenant', '  namespace: team-a', '  annotations:', `    kubelings.dev/v1-retention: '${value}'`, 'spec:', '  schedule: "0 2 * * *"', '  source: {etcd: {endpoints: ["https://e:2379"]}}', '  destination: {persistentVolumeClaim: {claimName: b}}', '  retention: {keepLast: 1000}', ''].join('\n');
    const run = cli(['preview', '-'], doc('{"keepDaily":0,"keepWeekly":-5,"keepMonthly":99999999999}'));
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain('--keep-weekly');
    expect(run.stderr).toContain('metadata.annotations.kubelings.dev/v1-retention: keepWeekly: must be >= 1');
    const nullRun = cli(['preview', '-'], doc('{"keepDaily":null}'));
    expect(nullRun.code).toBe(1);
    expect(nullRun.stderr).toContain('metadata.annotations.kubelings.dev/v1-retention: keepDaily: must be integer');
  });

  it('toV1 of that document (what preview and the constructs convert with) keeps keepLast 1000 and no invalid rule', () => {
    const schedule = { ...validSchedule(), metadata: { name: 'tenant', namespace: 'team-a', uid: PREVIEW_UID, annotations: { 'kubelings.dev/v1-retention': '{"keepDaily":0,"keepWeekly":-5,"keepMonthly":99999999999}' } }, spec: { ...validSchedule().spec, retention: { keepLast: 1000 } } } as BackupSchedule;
    const args = argsOf(buildCronJob(toV1(schedule)));
    expect(args).toContain('--keep-last=1000');
    expect(args.filter((a) => /^--keep-(daily|weekly|monthly)=/.test(a))).toEqual([]);
  });
});
