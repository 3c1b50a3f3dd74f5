import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateBackupSchedule, validateBackupScheduleV1, type BackupSchedule, type v1 } from '../../src/api/index.ts';
import { convertBackupSchedule, ConversionError, KEEP_LAST_MAX, RETENTION_ANNOTATION, toV1, toV1alpha1 } from '../../src/conversion/index.ts';
import { v1alpha1Schedule, v1Schedule } from './schema-arbitrary.ts';

type Json = Record<string, unknown>;
const deepFreeze = <T>(o: T): T => {
  if (o !== null && typeof o === 'object') for (const v of Object.values(o)) deepFreeze(v);
  return Object.freeze(o);
};

const alpha = (spec: Json, metadata: Json = { name: 'nightly', namespace: 'team-a', uid: 'u-1' }): BackupSchedule =>
  ({ apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', metadata, spec: { schedule: '0 2 * * *', destination: { persistentVolumeClaim: { claimName: 'backups' } }, ...spec } }) as unknown as BackupSchedule;
const beta = (spec: Json, metadata: Json = { name: 'nightly', namespace: 'team-a', uid: 'u-1' }): v1.BackupSchedule =>
  ({ apiVersion: 'kubelings.dev/v1', kind: 'BackupSchedule', metadata, spec: { schedule: '0 2 * * *', destination: { persistentVolumeClaim: { claimName: 'backups' } }, ...spec } }) as unknown as v1.BackupSchedule;

describe('BackupSchedule conversion between v1alpha1 and v1', () => {
  it.each([
    [
      'an etcd source gains its discriminator; keepLast stays keepLast',
      alpha({ source: { etcd: { endpoints: ['https://e:2379'] } }, retention: { keepLast: 7 } }),
      beta({ source: { type: 'Etcd', etcd: { endpoints: ['https://e:2379'] } }, retention: { keepLast: 7 } }),
    ],
    [
      'a claim source gains its discriminator; no retention stays none (each version defaults it the same: keepLast 7)',
      alpha({ source: { persistentVolumeClaim: { claimName: 'data' } } }),
      beta({ source: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'data' } } }),
    ],
  ])('%s', (_name, old, next) => {
    expect(toV1(old)).toEqual(next);
    expect(toV1alpha1(next)).toEqual(old);
  });

  it('carries grandfather-father-son rules through v1alpha1 in an annotation, showing the largest keepLast there', () => {
    const next = beta({ source: { type: 'Etcd', etcd: { endpoints: ['https://e:2379'] } }, retention: { keepDaily: 7, keepWeekly: 4, keepMonthly: 12 } }, { name: 'n', uid: 'u', annotations: { team: 'a' } });
    const old = toV1alpha1(next);
    expect(old.spec.retention).toEqual({ keepLast: KEEP_LAST_MAX });
    expect(old.metadata?.annotations).toEqual({ team: 'a', [RETENTION_ANNOTATION]: '{"keepDaily":7,"keepWeekly":4,"keepMonthly":12}' });
    expect(validateBackupSchedule(old)).toEqual([]);
    expect(toV1(old)).toEqual(next);
  });

  it('keeps the carried rules through a read-modify-write of other fields by a v1alpha1 client', () => {
    const next = beta({ source: { type: 'Etcd', etcd: { endpoints: ['https://e:2379'] } }, retention: { keepLast: 2, keepMonthly: 6 } });
    const old = toV1alpha1(next);
    const edited = { ...old, spec: { ...old.spec, schedule: '@hourly', suspend: true } } as BackupSchedule;
    expect(toV1(edited).spec).toEqual({ ...next.spec, schedule: '@hourly', suspend: true });
  });

  it('lets a change of keepLast made through v1alpha1 win over the carried rules, and drops the annotation', () => {
    const old = toV1alpha1(beta({ source: { type: 'Etcd', etcd: { endpoints: ['https://e:2379'] } }, retention: { keepLast: 3, keepDaily: 7 } }));
    const edited = { ...old, spec: { ...old.spec, retention: { keepLast: 5 } } } as BackupSchedule;
    const next = toV1(edited);
    expect(next.spec.retention).toEqual({ keepLast: 5 });
    expect(next.metadata).toEqual({ name: 'nightly', namespace: 'team-a', uid: 'u-1' });
  });

  it.each(['not json', '[1]', '"x"'])('ignores a carried annotation that is not a JSON object (%s)', (value) => {
    const old = alpha({ source: { etcd: { endpoints: ['https://e:2379'] } }, retention: { keepLast: KEEP_LAST_MAX } }, { name: 'n', uid: 'u', annotations: { [RETENTION_ANNOTATION]: value } });
    expect(toV1(old).spec.retention).toEqual({ keepLast: KEEP_LAST_MAX });
    expect(toV1(old).metadata).toEqual({ name: 'n', uid: 'u' });
  });

  it('passes status, metadata and fields it does not know through unchanged, and never mutates its input', () => {
    const status = { observedGeneration: 3, cronJobName: 'nightly', conditions: [{ type: 'Ready', status: 'True', reason: 'CronJobReady', message: '', lastTransitionTime: '2026-11-30T02:00:00Z' }] };
    const old = deepFreeze({ ...alpha({ source: { etcd: { endpoints: ['https://e:2379'] } }, future: { x: 1 } }), status } as BackupSchedule);
    const next = toV1(old);
    expect(next.status).toBe(old.status);
    expect((next.spec as unknown as Json)['future']).toEqual({ x: 1 });
    expect(toV1alpha1(deepFreeze(next))).toEqual(old);
  });

  it('returns an object already in the desired version as it is', () => {
    const old = alpha({ source: { etcd: { endpoints: ['https://e:2379'] } } });
    expect(convertBackupSchedule(old as unknown as Json, 'kubelings.dev/v1alpha1')).toBe(old);
  });

  it.each([
    [{ apiVersion: 'kubelings.dev/v1', kind: 'CronJob' }, 'kubelings.dev/v1alpha1', 'expected kind BackupSchedule, got "CronJob"'],
    [{ apiVersion: 'kubelings.dev/v2', kind: 'BackupSchedule' }, 'kubelings.dev/v1', 'unsupported apiVersion "kubelings.dev/v2" of BackupSchedule; expected one of kubelings.dev/v1alpha1, kubelings.dev/v1'],
    [{ apiVersion: 'kubelings.dev/v1', kind: 'BackupSchedule' }, 'kubelings.dev/v3', 'unsupported desiredAPIVersion "kubelings.dev/v3"; expected one of kubelings.dev/v1alpha1, kubelings.dev/v1'],
  ])('refuses %j to %s, naming the problem', (object, desired, message) => {
    expect(() => convertBackupSchedule(object, desired)).toThrow(ConversionError);
    expect(() => convertBackupSchedule(object, desired)).toThrow(message);
  });

  it('round-trips every valid v1alpha1 object through v1 exactly, and the v1 form is valid', () => {
    fc.assert(
      fc.property(v1alpha1Schedule, (old) => {
        expect(validateBackupSchedule(old)).toEqual([]);
        const next = toV1(deepFreeze(old) as unknown as BackupSchedule);
        expect(validateBackupScheduleV1(next)).toEqual([]);
        expect(toV1alpha1(next)).toEqual(old);
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips every valid v1 object through v1alpha1 exactly, and the v1alpha1 form is valid', () => {
    fc.assert(
      fc.property(v1Schedule, (next) => {
        expect(validateBackupScheduleV1(next)).toEqual([]);
        const old = toV1alpha1(deepFreeze(next) as unknown as v1.BackupSchedule);
        expect(validateBackupSchedule(old)).toEqual([]);
        expect(toV1(old)).toEqual(next);
        // Kubernetes keeps only the metadata a conversion may change: name, namespace and uid stay.
        expect([old.metadata?.name, old.metadata?.namespace, old.metadata?.uid]).toEqual([(next['metadata'] as Json)['name'], (next['metadata'] as Json)['namespace'], (next['metadata'] as Json)['uid']]);
      }),
      { numRuns: 300 },
    );
  });
});
