import { CronJob } from 'kubernetes-models/batch/v1/CronJob';
import { describe, expect, it } from 'vitest';
import type { BackupSchedule } from '../../src/api/index.ts';
import {
  buildCronJob,
  childName,
  DEFAULT_BACKUP_IMAGE,
  LABEL_BACKUP_SCHEDULE,
  ownerReference,
} from '../../src/pure/index.ts';
import { validSchedule } from '../api/invalid-cases.ts';

const schedule = (): BackupSchedule => validSchedule() as BackupSchedule;

describe('buildCronJob', () => {
  it('returns byte-identical output for the same input', () => {
    expect(JSON.stringify(buildCronJob(schedule()))).toBe(JSON.stringify(buildCronJob(schedule())));
  });

  it('does not mutate its input', () => {
    const input = schedule();
    const before = structuredClone(input);
    buildCronJob(input);
    expect(input).toEqual(before);
  });

  it('builds a CronJob that passes the Kubernetes OpenAPI schema', () => {
    expect(() => new CronJob(buildCronJob(schedule())).validate()).not.toThrow();
  });

  it('names the child after its owner, in the owner namespace, with a controller ownerReference', () => {
    const job = buildCronJob(schedule());
    expect(job.metadata?.name).toBe('nightly');
    expect(job.metadata?.namespace).toBe('team-a');
    expect(job.metadata?.ownerReferences).toEqual([
      { apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', name: 'nightly', uid: '0b6f1c1e-0000-4000-8000-000000000001', controller: true, blockOwnerDeletion: true },
    ]);
    expect(ownerReference(schedule())).toEqual(job.metadata?.ownerReferences?.[0]);
    expect(childName(schedule())).toBe('nightly');
  });

  it('puts the same labels on the CronJob, the Job template and the Pod template', () => {
    const job = buildCronJob(schedule());
    const labels = job.metadata?.labels;
    expect(labels?.[LABEL_BACKUP_SCHEDULE]).toBe('nightly');
    expect(job.spec?.jobTemplate.metadata?.labels).toEqual(labels);
    expect(job.spec?.jobTemplate.spec?.template.metadata?.labels).toEqual(labels);
  });

  it('runs the backup under the restricted Pod Security profile', () => {
    const pod = buildCronJob(schedule()).spec?.jobTemplate.spec?.template.spec;
    expect(pod?.restartPolicy).toBe('Never');
    expect(pod?.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod?.containers[0]?.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod?.volumes?.find((v) => v.name === 'tmp')).toEqual({ name: 'tmp', emptyDir: {} });
  });

  it('runs as the image\'s user 65532 unless spec.podSecurityContext names the data\'s owner, staying restricted', () => {
    expect(buildCronJob(schedule()).spec?.jobTemplate.spec?.template.spec?.securityContext).toEqual({
      runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' },
    });
    const owner = schedule();
    owner.spec.podSecurityContext = { runAsUser: 999, supplementalGroups: [70], fsGroupChangePolicy: 'OnRootMismatch' };
    const job = buildCronJob(owner);
    expect(job.spec?.jobTemplate.spec?.template.spec?.securityContext).toEqual({
      runAsNonRoot: true, runAsUser: 999, runAsGroup: 65532, fsGroup: 65532, fsGroupChangePolicy: 'OnRootMismatch', supplementalGroups: [70], seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(job.spec?.jobTemplate.spec?.template.spec?.containers[0]?.securityContext).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(() => new CronJob(job).validate()).not.toThrow();
  });

  it('fails the Job at once on exit 3 (incomplete archive) and 4 (pruning failed) of the backup container: retrying cannot help', () => {
    const job = buildCronJob(schedule()).spec!.jobTemplate.spec!;
    expect(job.podFailurePolicy).toEqual({ rules: [{ action: 'FailJob', onExitCodes: { containerName: 'backup', operator: 'In', values: [3, 4] } }] });
    // podFailurePolicy requires restartPolicy Never.
    expect(job.template.spec?.restartPolicy).toBe('Never');
    expect(buildCronJob(schedule(), { podFailurePolicy: false }).spec!.jobTemplate.spec!.podFailurePolicy).toBeUndefined();
  });

  it('defaults concurrencyPolicy to Forbid', () => {
    expect(buildCronJob(schedule()).spec?.concurrencyPolicy).toBe('Forbid');
  });

  it.each([
    ['the spec image over the option', 'spec.example/img:1', 'option.example/img:2', 'spec.example/img:1'],
    ['the option image when the spec has none', undefined, 'option.example/img:2', 'option.example/img:2'],
    ['DEFAULT_BACKUP_IMAGE when neither is set', undefined, undefined, DEFAULT_BACKUP_IMAGE],
  ])('uses %s', (_name, specImage, optionImage, expected) => {
    const input = schedule();
    if (specImage !== undefined) input.spec.image = specImage;
    const job = buildCronJob(input, optionImage === undefined ? {} : { image: optionImage });
    expect(job.spec?.jobTemplate.spec?.template.spec?.containers[0]?.image).toBe(expected);
  });

  it.each([
    ['an invalid spec', (s: BackupSchedule) => (s.spec.schedule = 'every day'), /spec\.schedule/],
    ['a missing uid', (s: BackupSchedule) => delete s.metadata?.uid, /metadata\.uid is required/],
    ['a missing namespace', (s: BackupSchedule) => delete s.metadata?.namespace, /metadata\.namespace is required/],
  ])('throws a clear error on %s', (_name, mutate, message) => {
    const input = schedule();
    mutate(input);
    expect(() => buildCronJob(input)).toThrow(message);
  });
});
