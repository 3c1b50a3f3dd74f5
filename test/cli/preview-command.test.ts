import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import type { BackupSchedule } from '../../src/api/index.ts';
import { buildCronJob } from '../../src/pure/index.ts';
import { PREVIEW_UID, previewCronJob } from '../../src/pure/preview.ts';
import type { PreviewItem } from '../../src/cli/preview-command.ts';
import { validSchedule } from '../api/invalid-cases.ts';
import { cli } from './cli-io.ts';

const EXAMPLE = 'dist/examples/01-backupschedule-nightly-etcd.yaml';
const example = parse(readFileSync(EXAMPLE, 'utf8')) as BackupSchedule;
const withUid = (s: BackupSchedule): BackupSchedule => ({ ...s, metadata: { ...s.metadata, uid: PREVIEW_UID } });

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
    expect(run.stderr).toMatch(/^<stdin>:\d+: spec\.retention\.keepLast: must be <= 1000\n$/);
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
