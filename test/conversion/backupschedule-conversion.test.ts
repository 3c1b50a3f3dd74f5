import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateBackupSchedule, validateBackupScheduleV1, type BackupSchedule, type v1 } from '../../src/api/index.ts';
import { convertBackupSchedule, ConversionError, DESTINATION_ANNOTATION, ENCRYPTION_ANNOTATION, KEEP_LAST_MAX, REJECTED_TEXT_MAX, RETENTION_ANNOTATION, RETENTION_REJECTED_ANNOTATION, toV1, toV1alpha1 } from '../../src/conversion/index.ts';
import { v1alpha1Schedule, v1Schedule } from './schema-arbitrary.ts';

type Json = Record<string, unknown>;
const deepFreeze = <T>(o: T): T => {
  if (o !== null && typeof o === 'object') for (const v of Object.values(o)) deepFreeze(v);
  return Object.freeze(o);
};

const alpha = (spec: Json, metadata: Json = { name: 'nightly', namespace: 'team-a', uid: 'u-1' }): BackupSchedule =>
  ({ apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', metadata, spec: { schedule: '0 2 * * *', destination: { persistentVolumeClaim: { claimName: 'backups' } }, ...spec } }) as unknown as BackupSchedule;
const beta = (spec: Json, metadata: Json = { name: 'nightly', namespace: 'team-a', uid: 'u-1' }): v1.BackupSchedule =>
  ({ apiVersion: 'kubelings.dev/v1', kind: 'BackupSchedule', metadata, spec: { schedule: '0 2 * * *', destination: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'backups' } }, ...spec } }) as unknown as v1.BackupSchedule;

/** A v1 object as the API server serves it: destination.type defaulted (a 0.2.0-stored object has none). */
const defaulted = (o: Json): Json => {
  const spec = o['spec'] as Json;
  const destination = spec['destination'] as Json;
  return 'type' in destination ? o : { ...o, spec: { ...spec, destination: { type: 'PersistentVolumeClaim', ...destination } } };
};

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

  describe('a carried annotation that is not a valid v1 retention (issue 30: it bypassed the v1 schema)', () => {
    const source = { etcd: { endpoints: ['https://e:2379'] } };
    const withAnnotation = (value: string, keepLast = KEEP_LAST_MAX): BackupSchedule =>
      alpha({ source, retention: { keepLast } }, { name: 'n', namespace: 'team-a', uid: 'u', annotations: { team: 'a', [RETENTION_ANNOTATION]: value } });
    const report = (schedule: v1.BackupSchedule): { rejected: string; reason: string } => JSON.parse(schedule.metadata?.annotations?.[RETENTION_REJECTED_ANNOTATION] ?? 'null') as { rejected: string; reason: string };

    it.each([
      ['{"keepDaily":0,"keepWeekly":-5,"keepMonthly":99999999999}', ['keepDaily: must be >= 1', 'keepWeekly: must be >= 1', 'keepMonthly: must be <= 1000']],
      ['{"keepDaily":null}', ['keepDaily: must be integer']],
      ['{}', ['at least one of keepLast, keepDaily, keepWeekly, keepMonthly must be set']],
      ['{"keepDaily":7,"keepHourly":24}', ['keepHourly: is not a known field']],
      ['not json', ['is not JSON: ']],
      ['[1]', ['must be a JSON object of v1 retention rules']],
      ['"x"', ['must be a JSON object of v1 retention rules']],
    ])('%s is dropped whole: v1 keeps v1alpha1\'s retention and reports the text and why', (value, problems) => {
      const next = toV1(withAnnotation(value));
      expect(next.spec.retention).toEqual({ keepLast: KEEP_LAST_MAX });
      expect(validateBackupScheduleV1(next)).toEqual([]);
      expect(Object.keys(next.metadata?.annotations ?? {})).toEqual(['team', RETENTION_REJECTED_ANNOTATION]);
      expect(report(next).rejected).toBe(value);
      for (const problem of problems) expect(report(next).reason).toContain(problem);
      expect(report(next).reason).toMatch(/^kubelings\.dev\/v1-retention is not a valid v1 retention, so v1 uses v1alpha1's spec\.retention: /);
      // The same problems are errors of the v1alpha1 object, naming the annotation and the rule.
      const errors = validateBackupSchedule(withAnnotation(value));
      for (const problem of problems) expect(errors.map((e) => e.message)).toContainEqual(expect.stringContaining(`kubelings.dev/v1-retention: ${problem}`));
      expect(new Set(errors.map((e) => e.field))).toEqual(new Set([`metadata.annotations.${RETENTION_ANNOTATION}`]));
    });

    it('is reported even when keepLast no longer reads what conversion wrote (the key is reserved)', () => {
      const next = toV1(withAnnotation('{"keepWeekly":-5}', 3));
      expect(next.spec.retention).toEqual({ keepLast: 3 });
      expect(report(next).reason).toContain('keepWeekly: must be >= 1');
    });

    it('keeps the report through v1 -> v1alpha1 -> v1, and drops it once a valid annotation is restored', () => {
      const stored = toV1(withAnnotation('{"keepWeekly":-5}'));
      expect(toV1(toV1alpha1(stored))).toEqual(stored);
      const fixed = toV1({ ...toV1alpha1(stored), metadata: { ...toV1alpha1(stored).metadata, annotations: { ...toV1alpha1(stored).metadata?.annotations, [RETENTION_ANNOTATION]: '{"keepWeekly":5}' } } });
      expect(fixed.spec.retention).toEqual({ keepWeekly: 5 });
      expect(fixed.metadata?.annotations).toEqual({ team: 'a' });
    });

    it('bounds the report whatever the annotation\'s size, so the v1 object stays within the API server\'s 256 KiB of annotations', () => {
      const huge = JSON.stringify(Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`keepRule${i}`, i])));
      const value = report(toV1(withAnnotation(huge)));
      expect(value.rejected).toBe(`${huge.slice(0, REJECTED_TEXT_MAX)}… (${huge.length} characters)`);
      expect(value.reason).toMatch(/keepRule0: is not a known field.*; and 19995 more$/);
      expect(value.reason.length).toBeLessThan(2_000);
    });
  });

  describe('v1-only destination and encryption (issue 29)', () => {
    const RECIPIENT = 'age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p';
    const source = { type: 'Etcd', etcd: { endpoints: ['https://e:2379'] } };
    const store = { type: 'ObjectStore', objectStore: { bucket: 'acme-backups', prefix: 'prod', endpoint: 'https://minio:9000', forcePathStyle: true, credentialsSecretName: 's3', caSecretName: 'ca' } };
    const encryption = { ageRecipients: [RECIPIENT] };
    const rejectedOf = (o: v1.BackupSchedule, key: string): { rejected: string; reason: string } => JSON.parse(o.metadata?.annotations?.[`${key}-rejected`] ?? 'null') as { rejected: string; reason: string };

    it('carries an object store and encryption through v1alpha1 in annotations; v1alpha1 reads no claim', () => {
      const next = beta({ source, destination: store, encryption }, { name: 'n', uid: 'u', annotations: { team: 'a' } });
      const old = toV1alpha1(next);
      expect(old.spec.destination).toEqual({});
      expect(old.spec).not.toHaveProperty('encryption');
      expect(old.metadata?.annotations).toEqual({ team: 'a', [DESTINATION_ANNOTATION]: JSON.stringify(store), [ENCRYPTION_ANNOTATION]: JSON.stringify(encryption) });
      // v1alpha1 cannot name a bucket: its own validation refuses the object rather than guess a claim.
      expect(validateBackupSchedule(old).map((e) => e.field)).toEqual(['spec.destination.persistentVolumeClaim']);
      expect(toV1(old)).toEqual(next);
    });

    it('carries encryption to a claim, and drops the claim destination\'s type going down', () => {
      const next = beta({ source, encryption });
      const old = toV1alpha1(next);
      expect(old.spec.destination).toEqual({ persistentVolumeClaim: { claimName: 'backups' } });
      expect(validateBackupSchedule(old)).toEqual([]);
      expect(toV1(old)).toEqual(next);
    });

    it('lets a claim set through v1alpha1 win over the carried object store, and drops the annotation', () => {
      const old = toV1alpha1(beta({ source, destination: store }));
      const edited = { ...old, spec: { ...old.spec, destination: { persistentVolumeClaim: { claimName: 'elsewhere' } } } } as BackupSchedule;
      const next = toV1(edited);
      expect(next.spec.destination).toEqual({ type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'elsewhere' } });
      expect(next.metadata?.annotations).toBeUndefined();
    });

    it.each([
      ['an http endpoint without the opt-in', { ...store, objectStore: { ...store.objectStore, endpoint: 'http://minio:9000' } }, 'objectStore.endpoint: endpoint must use https:// unless allowHttp is true'],
      ['a bucket with ".."', { ...store, objectStore: { ...store.objectStore, bucket: 'a..b' } }, 'objectStore.bucket: bucket must not contain two adjacent periods'],
      ['a field v1 does not have', { ...store, objectStore: { ...store.objectStore, secretAccessKey: 'x' } }, 'objectStore.secretAccessKey: is not a known field'],
      ['an object store without its type', { objectStore: store.objectStore }, 'persistentVolumeClaim: persistentVolumeClaim must be set exactly when type is PersistentVolumeClaim'],
    ])('rejects a carried destination with %s (it bypassed v1 admission): dropped, reported, v1alpha1\'s destination kept', (_name, destination, problem) => {
      const old = alpha({ source: { etcd: source.etcd }, destination: {} }, { name: 'n', namespace: 'team-a', uid: 'u', annotations: { [DESTINATION_ANNOTATION]: JSON.stringify(destination) } });
      expect(validateBackupSchedule(old).map((e) => e.message)).toContain(`metadata.annotations.${DESTINATION_ANNOTATION}: ${problem}`);
      const next = toV1(old);
      expect(next.spec.destination).toEqual({});
      expect(rejectedOf(next, DESTINATION_ANNOTATION).reason).toContain(problem);
      expect(next.metadata?.annotations).not.toHaveProperty(DESTINATION_ANNOTATION);
    });

    it('fails closed on a carried encryption it rejects: v1 is suspended rather than back up unencrypted', () => {
      const typo = `${RECIPIENT.slice(0, 30)}${RECIPIENT[30] === 'q' ? 'p' : 'q'}${RECIPIENT.slice(31)}`;
      const old = alpha({ source: { etcd: source.etcd } }, { name: 'n', namespace: 'team-a', uid: 'u', annotations: { [ENCRYPTION_ANNOTATION]: JSON.stringify({ ageRecipients: [typo] }) } });
      expect(validateBackupSchedule(old).map((e) => e.field)).toEqual([`metadata.annotations.${ENCRYPTION_ANNOTATION}`]);
      const next = toV1(old);
      expect(next.spec.suspend).toBe(true);
      expect(next.spec).not.toHaveProperty('encryption');
      expect(validateBackupScheduleV1(next)).toEqual([]);
      expect(rejectedOf(next, ENCRYPTION_ANNOTATION).reason).toMatch(/^kubelings\.dev\/v1-encryption is not a valid v1 encryption, so v1 has no spec\.encryption and is suspended: ageRecipients\[0\]: is not a valid age recipient/);
    });
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
        // An object store cannot be a v1alpha1 destination: its v1alpha1 form has none, on purpose (an
        // old reader must not back up elsewhere); everything else is valid v1alpha1.
        const toBucket = ((next['spec'] as Json)['destination'] as Json)['type'] === 'ObjectStore';
        expect(validateBackupSchedule(old).map((e) => e.field)).toEqual(toBucket ? ['spec.destination.persistentVolumeClaim'] : []);
        // Exactly, but for the destination type a 0.2.0 object lacks, which conversion states (as the API server's default does).
        expect(toV1(old)).toEqual(defaulted(next));
        // Kubernetes keeps only the metadata a conversion may change: name, namespace and uid stay.
        expect([old.metadata?.name, old.metadata?.namespace, old.metadata?.uid]).toEqual([(next['metadata'] as Json)['name'], (next['metadata'] as Json)['namespace'], (next['metadata'] as Json)['uid']]);
      }),
      { numRuns: 300 },
    );
  });
});
