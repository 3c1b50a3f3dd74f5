import { readFileSync } from 'node:fs';
import { App, Chart, JsonPatch, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { BackupSchedule as BackupScheduleObject, BackupScheduleSpec } from '../../src/api/index.ts';
import { buildCronJob } from '../../src/pure/index.ts';
import { BackupSchedule, GROUP_VERSION, GROUP_VERSION_V1, PREVIEW_UID, previewCronJob, toV1, toV1alpha1, type v1 } from '../../src/constructs/index.ts';
import { ExampleSchedule } from '../../src/manifests/index.ts';

const spec: BackupScheduleSpec = {
  schedule: '30 3 * * *',
  timeZone: 'Europe/Berlin',
  source: { persistentVolumeClaim: { claimName: 'app-data' } },
  destination: { persistentVolumeClaim: { claimName: 'backups', path: 'app' } },
  retention: { keepLast: 14 },
};

/** 0.2.0's default, now asked for: a v1alpha1 app keeps synthesizing the same bytes. */
const alpha = { apiVersion: GROUP_VERSION } as const;

describe('BackupSchedule construct', () => {
  it('synthesizes a BackupSchedule with the chart namespace and the given spec', () => {
    const chart = new Chart(Testing.app(), 'team-a', { namespace: 'team-a', disableResourceNameHashes: true });
    new BackupSchedule(chart, 'app-data', { ...alpha, metadata: { name: 'app-data' }, spec });
    const objects = Testing.synth(chart);
    expect(objects).toMatchSnapshot();
    expect(objects).toEqual([
      { apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', metadata: { name: 'app-data', namespace: 'team-a' }, spec },
    ]);
  });

  it.each([
    ['keepLast above its bound', { ...spec, retention: { keepLast: 5000 } }, 'spec.retention.keepLast: must be <= 1000'],
    ['a cron hour out of range', { ...spec, schedule: '0 25 * * *' }, 'spec.schedule: invalid cron schedule "0 25 * * *"'],
    ['an unknown time zone', { ...spec, timeZone: 'Mars/Olympus_Mons' }, 'spec.timeZone: unknown time zone Mars/Olympus_Mons'],
    ['two sources (a CEL rule)', { ...spec, source: { ...spec.source, etcd: { endpoints: ['https://e:2379'] } } }, 'spec.source: exactly one of etcd or persistentVolumeClaim must be set'],
  ] as const)('fails Testing.synth on %s, naming the construct and the field', (_name, bad, message) => {
    const chart = Testing.chart();
    new BackupSchedule(chart, 'bad', { ...alpha, metadata: { name: 'bad' }, spec: bad as BackupScheduleSpec });
    expect(() => Testing.synth(chart)).toThrow(message);
    expect(() => Testing.synth(chart)).toThrow('[test/bad]');
  });

  it('fails app.synth() as well, so `cdk8s synth` stops before writing anything', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'c');
    new BackupSchedule(chart, 'bad', { ...alpha, metadata: { name: 'bad' }, spec: { ...spec, retention: { keepLast: 0 } } });
    expect(() => app.synth()).toThrow('spec.retention.keepLast: must be >= 1');
  });

  it('checks what a JSON patch added after construction', () => {
    const chart = Testing.chart();
    const schedule = new BackupSchedule(chart, 'patched', { ...alpha, metadata: { name: 'patched' }, spec });
    schedule.addJsonPatch(JsonPatch.add('/spec/keeplast', 3));
    expect(() => Testing.synth(chart)).toThrow('spec.keeplast: is not a known field');
  });

  it('gives toCronJob() exactly what the controller builds, for the same object', () => {
    const chart = new Chart(Testing.app(), 'c', { namespace: 'team-a' });
    const schedule = new BackupSchedule(chart, 'app-data', { ...alpha, metadata: { name: 'app-data' }, spec });
    const manifest = Testing.synth(chart)[0] as BackupScheduleObject;
    const controller = buildCronJob({ ...manifest, metadata: { ...manifest.metadata, uid: PREVIEW_UID } });
    expect(schedule.toCronJob()).toEqual(controller);
    expect(schedule.toCronJob({ image: 'registry.local/backup:1' }).spec?.jobTemplate.spec?.template.spec?.containers[0]?.image).toBe('registry.local/backup:1');
    expect(schedule.toCronJob()).toMatchSnapshot();
  });

  it('previews a namespace-less schedule in the namespace it is told, "default" otherwise', () => {
    const chart = Testing.chart();
    const schedule = new BackupSchedule(chart, 'x', { ...alpha, metadata: { name: 'x' }, spec });
    expect(schedule.toCronJob().metadata?.namespace).toBe('default');
    expect(schedule.toCronJob({ namespace: 'ops' }).metadata?.namespace).toBe('ops');
    expect(schedule.toCronJob().metadata?.ownerReferences?.[0]?.uid).toBe(PREVIEW_UID);
  });

  it('previews every golden input as the controller builds it (the uid aside)', () => {
    const input = parse(readFileSync(new URL('../golden/inputs/03-pvc-source.yaml', import.meta.url), 'utf8')) as BackupScheduleObject;
    expect(previewCronJob(input)).toEqual(buildCronJob(input));
  });

  it('documents each spec default in the generated props type (@default from the schema)', () => {
    const types = readFileSync(new URL('../../imports/backupschedule.ts', import.meta.url), 'utf8');
    for (const [field, value] of [['keepLast', '7'], ['concurrencyPolicy', '"Forbid"'], ['backoffLimit', '3'], ['suspend', 'false']]) {
      expect(types).toMatch(new RegExp(`@default ${value}\\n\\s+\\*/\\n\\s+${field}\\?:`));
    }
  });

  it('is what the operator\'s own ExampleSchedule uses, in v1', () => {
    const chart = new Chart(new App(), 'examples');
    const example = new ExampleSchedule(chart, 'Example');
    expect(example.schedule).toBeInstanceOf(BackupSchedule);
    expect(example.schedule.toBackupSchedule().apiVersion).toBe(GROUP_VERSION_V1);
  });
});

const specV1: v1.BackupScheduleSpec = {
  schedule: '0 2 * * *',
  source: { type: 'Etcd', etcd: { endpoints: ['https://etcd-0.etcd:2379'], tlsSecretName: 'etcd-client-tls' } },
  destination: { persistentVolumeClaim: { claimName: 'etcd-backups', path: 'gfs' } },
  retention: { keepDaily: 7, keepWeekly: 4, keepMonthly: 6 },
};

describe('BackupSchedule construct in kubelings.dev/v1', () => {
  it('synthesizes a v1 BackupSchedule with the spec as given', () => {
    const chart = new Chart(Testing.app(), 'team-a', { namespace: 'team-a', disableResourceNameHashes: true });
    const schedule = new BackupSchedule(chart, 'gfs', { apiVersion: GROUP_VERSION_V1, metadata: { name: 'gfs' }, spec: specV1 });
    const objects = Testing.synth(chart);
    expect(objects).toEqual([{ apiVersion: 'kubelings.dev/v1', kind: 'BackupSchedule', metadata: { name: 'gfs', namespace: 'team-a' }, spec: specV1 }]);
    expect(objects).toMatchSnapshot();
    // Typed per version: a v1 manifest has the source discriminator.
    const source: 'Etcd' | 'PersistentVolumeClaim' = schedule.toBackupSchedule().spec.source.type;
    expect(source).toBe('Etcd');
  });

  it('gives toCronJob() the grandfather-father-son flags and the v1 ownerReference, as the controller builds it', () => {
    const chart = new Chart(Testing.app(), 'c', { namespace: 'team-a' });
    const schedule = new BackupSchedule(chart, 'gfs', { apiVersion: GROUP_VERSION_V1, metadata: { name: 'gfs' }, spec: specV1 });
    const manifest = schedule.toBackupSchedule();
    const job = schedule.toCronJob();
    expect(job).toEqual(buildCronJob({ ...manifest, metadata: { ...manifest.metadata, uid: PREVIEW_UID } }));
    expect(job.spec?.jobTemplate.spec?.template.spec?.containers[0]?.args?.filter((a) => a.startsWith('--keep-'))).toEqual(['--keep-daily=7', '--keep-weekly=4', '--keep-monthly=6']);
    expect(job.metadata?.ownerReferences?.[0]?.apiVersion).toBe('kubelings.dev/v1');
    expect(job).toMatchSnapshot();
  });

  it.each([
    ['a source without type', { ...specV1, source: { etcd: specV1.source.etcd } }, 'spec.source.type: is required'],
    ['a type naming the absent member', { ...specV1, source: { ...specV1.source, type: 'PersistentVolumeClaim' } }, 'spec.source.etcd: etcd must be set exactly when type is Etcd'],
    ['keepDaily 0', { ...specV1, retention: { keepDaily: 0 } }, 'spec.retention.keepDaily: must be >= 1'],
    ['a retention without a rule', { ...specV1, retention: {} }, 'spec.retention: at least one of keepLast, keepDaily, keepWeekly, keepMonthly must be set'],
  ] as const)('fails Testing.synth on %s, naming the v1 field', (_name, bad, message) => {
    const chart = Testing.chart();
    new BackupSchedule(chart, 'bad', { apiVersion: GROUP_VERSION_V1, metadata: { name: 'bad' }, spec: bad as v1.BackupScheduleSpec });
    expect(() => Testing.synth(chart)).toThrow(message);
    expect(() => Testing.synth(chart)).toThrow('[test/bad]');
  });

  it('checks a v1alpha1 construct as v1alpha1: GFS rules and source.type are unknown there', () => {
    const chart = Testing.chart();
    new BackupSchedule(chart, 'alpha', { ...alpha, metadata: { name: 'alpha' }, spec: specV1 as unknown as BackupScheduleSpec });
    expect(() => Testing.synth(chart)).toThrow('spec.source.type: is not a known field');
    expect(() => Testing.synth(chart)).toThrow('spec.retention.keepDaily: is not a known field');
  });

  it('refuses an apiVersion patched to one that is not served, listing both served versions', () => {
    const chart = Testing.chart();
    const schedule = new BackupSchedule(chart, 'x', { apiVersion: GROUP_VERSION_V1, metadata: { name: 'x' }, spec: specV1 });
    schedule.addJsonPatch(JsonPatch.replace('/apiVersion', 'kubelings.dev/v2'));
    expect(() => Testing.synth(chart)).toThrow('apiVersion: must be one of "kubelings.dev/v1alpha1", "kubelings.dev/v1", got "kubelings.dev/v2"');
  });

  it('types spec by apiVersion at compile time', () => {
    const chart = Testing.chart();
    // @ts-expect-error a v1alpha1 spec has no source.type.
    new BackupSchedule(chart, 'a', { ...alpha, spec: { ...spec, source: { type: 'Etcd', etcd: { endpoints: ['https://e:2379'] } } } });
    // @ts-expect-error a v1 source needs its type.
    new BackupSchedule(chart, 'b', { apiVersion: GROUP_VERSION_V1, spec: { ...specV1, source: { etcd: { endpoints: ['https://e:2379'] } } } });
    expect(chart.node.children).toHaveLength(2);
  });

  it('converts a v1alpha1 app\'s schedule to v1 with toV1 and back with toV1alpha1, the same CronJob either way', () => {
    const chart = new Chart(Testing.app(), 'c', { namespace: 'team-a' });
    const old = new BackupSchedule(chart, 'app-data', { ...alpha, metadata: { name: 'app-data' }, spec });
    const up = toV1(old.toBackupSchedule());
    const migrated = new BackupSchedule(new Chart(Testing.app(), 'c', { namespace: 'team-a' }), 'app-data', { apiVersion: GROUP_VERSION_V1, metadata: { name: 'app-data' }, spec: up.spec });
    expect(migrated.toBackupSchedule().spec.source).toEqual({ type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'app-data' } });
    expect(toV1alpha1(migrated.toBackupSchedule())).toEqual(old.toBackupSchedule());
    const { ownerReferences: _a, ...alphaMeta } = old.toCronJob().metadata ?? {};
    const { ownerReferences: _b, ...v1Meta } = migrated.toCronJob().metadata ?? {};
    expect(v1Meta).toEqual(alphaMeta);
    expect(migrated.toCronJob().spec).toEqual(old.toCronJob().spec);
  });
});

describe('BackupSchedule construct, as a new app writes it', () => {
  it('defaults to kubelings.dev/v1: a v1 spec without apiVersion synthesizes and previews as v1', () => {
    const chart = new Chart(Testing.app(), 'c', { namespace: 'team-a', disableResourceNameHashes: true });
    const schedule = new BackupSchedule(chart, 'gfs', { metadata: { name: 'gfs' }, spec: specV1 });
    expect(Testing.synth(chart)).toEqual([{ apiVersion: 'kubelings.dev/v1', kind: 'BackupSchedule', metadata: { name: 'gfs', namespace: 'team-a' }, spec: specV1 }]);
    // Typed as v1 without asking: the source discriminator is there.
    const type: 'Etcd' | 'PersistentVolumeClaim' = schedule.toBackupSchedule().spec.source.type;
    expect(type).toBe('Etcd');
    expect(schedule.toCronJob().metadata?.ownerReferences?.[0]?.apiVersion).toBe('kubelings.dev/v1');
  });

  it('says "this is a v1 field; set apiVersion" for a v1-shaped spec in an explicit v1alpha1', () => {
    const chart = Testing.chart();
    new BackupSchedule(chart, 'old', { apiVersion: 'kubelings.dev/v1alpha1', metadata: { name: 'old' }, spec: specV1 as unknown as BackupScheduleSpec });
    expect(() => Testing.synth(chart)).toThrow('spec.source.type: is not a known field; this is a v1 field: set apiVersion: kubelings.dev/v1');
    expect(() => Testing.synth(chart)).toThrow('spec.retention.keepDaily: is not a known field; this is a v1 field: set apiVersion: kubelings.dev/v1');
  });

  it('takes endpoints as a string[], a readonly string[] or an as-const list', () => {
    const fromConfig: string[] = ['https://etcd-0.etcd:2379', 'https://etcd-1.etcd:2379'];
    const frozen: readonly string[] = Object.freeze([...fromConfig]);
    const literal = ['https://etcd-0.etcd:2379'] as const;
    const chart = new Chart(Testing.app(), 'c', { namespace: 'ops' });
    for (const [id, endpoints] of [['list', fromConfig], ['frozen', frozen], ['literal', literal]] as const) {
      const etcd: v1.EtcdSource = { endpoints };
      new BackupSchedule(chart, id, { metadata: { name: id }, spec: { ...specV1, source: { type: 'Etcd', etcd } } });
    }
    expect(Testing.synth(chart).map((o) => (o as v1.BackupSchedule).spec.source.etcd?.endpoints)).toEqual([fromConfig, frozen, literal]);
  });

  it.each([
    ['no endpoint', [], 'spec.source.etcd.endpoints: must NOT have fewer than 1 items'],
    ['ten endpoints', Array.from({ length: 10 }, (_, i) => `https://etcd-${i}.etcd:2379`), 'spec.source.etcd.endpoints: must NOT have more than 9 items'],
  ])('checks the endpoints bounds at synth, naming the field: %s', (_name, endpoints, message) => {
    const chart = Testing.chart();
    new BackupSchedule(chart, 'bounds', { metadata: { name: 'bounds' }, spec: { ...specV1, source: { type: 'Etcd', etcd: { endpoints } } } });
    expect(() => Testing.synth(chart)).toThrow(message);
  });
});
