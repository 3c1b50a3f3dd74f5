import { readFileSync } from 'node:fs';
import { App, Chart, JsonPatch, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { BackupSchedule as BackupScheduleObject, BackupScheduleSpec } from '../../src/api/index.ts';
import { buildCronJob } from '../../src/pure/index.ts';
import { BackupSchedule, PREVIEW_UID, previewCronJob } from '../../src/constructs/index.ts';
import { ExampleSchedule } from '../../src/manifests/index.ts';

const spec: BackupScheduleSpec = {
  schedule: '30 3 * * *',
  timeZone: 'Europe/Berlin',
  source: { persistentVolumeClaim: { claimName: 'app-data' } },
  destination: { persistentVolumeClaim: { claimName: 'backups', path: 'app' } },
  retention: { keepLast: 14 },
};

describe('BackupSchedule construct', () => {
  it('synthesizes a BackupSchedule with the chart namespace and the given spec', () => {
    const chart = new Chart(Testing.app(), 'team-a', { namespace: 'team-a', disableResourceNameHashes: true });
    new BackupSchedule(chart, 'app-data', { metadata: { name: 'app-data' }, spec });
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
    new BackupSchedule(chart, 'bad', { metadata: { name: 'bad' }, spec: bad as BackupScheduleSpec });
    expect(() => Testing.synth(chart)).toThrow(message);
    expect(() => Testing.synth(chart)).toThrow('[test/bad]');
  });

  it('fails app.synth() as well, so `cdk8s synth` stops before writing anything', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'c');
    new BackupSchedule(chart, 'bad', { metadata: { name: 'bad' }, spec: { ...spec, retention: { keepLast: 0 } } });
    expect(() => app.synth()).toThrow('spec.retention.keepLast: must be >= 1');
  });

  it('checks what a JSON patch added after construction', () => {
    const chart = Testing.chart();
    const schedule = new BackupSchedule(chart, 'patched', { metadata: { name: 'patched' }, spec });
    schedule.addJsonPatch(JsonPatch.add('/spec/keeplast', 3));
    expect(() => Testing.synth(chart)).toThrow('spec.keeplast: is not a known field');
  });

  it('gives toCronJob() exactly what the controller builds, for the same object', () => {
    const chart = new Chart(Testing.app(), 'c', { namespace: 'team-a' });
    const schedule = new BackupSchedule(chart, 'app-data', { metadata: { name: 'app-data' }, spec });
    const manifest = Testing.synth(chart)[0] as BackupScheduleObject;
    const controller = buildCronJob({ ...manifest, metadata: { ...manifest.metadata, uid: PREVIEW_UID } });
    expect(schedule.toCronJob()).toEqual(controller);
    expect(schedule.toCronJob({ image: 'registry.local/backup:1' }).spec?.jobTemplate.spec?.template.spec?.containers[0]?.image).toBe('registry.local/backup:1');
    expect(schedule.toCronJob()).toMatchSnapshot();
  });

  it('previews a namespace-less schedule in the namespace it is told, "default" otherwise', () => {
    const chart = Testing.chart();
    const schedule = new BackupSchedule(chart, 'x', { metadata: { name: 'x' }, spec });
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

  it('is what the operator\'s own ExampleSchedule uses', () => {
    const chart = new Chart(new App(), 'examples');
    const example = new ExampleSchedule(chart, 'Example');
    expect(example.schedule).toBeInstanceOf(BackupSchedule);
  });
});
