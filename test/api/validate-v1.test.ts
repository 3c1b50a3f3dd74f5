import { describe, expect, it } from 'vitest';
import { backupScheduleV1Schema, toCrdOpenApiSchema, validateBackupScheduleV1, type BackupSchedule } from '../../src/api/index.ts';
import { ConversionError, toV1 } from '../../src/conversion/index.ts';
import { INVALID_CASES, validSchedule } from './invalid-cases.ts';

/** The v1alpha1 corpus case, as v1 (conversion derives source.type from the member present). */
const asV1 = (mutate: (o: Record<string, any>) => void = () => undefined): Record<string, any> => {
  const o = validSchedule();
  mutate(o);
  try {
    return toV1(o as BackupSchedule) as unknown as Record<string, any>;
  } catch (error) {
    // A case that breaks apiVersion or kind cannot be converted: apply it to the converted base instead.
    if (!(error instanceof ConversionError)) throw error;
    const converted = toV1(validSchedule() as BackupSchedule) as unknown as Record<string, any>;
    mutate(converted);
    return converted;
  }
};

/** Where v1 names a problem differently, because its source is a union with a discriminator. */
const V1_FIELD: Readonly<Record<string, string>> = {
  'spec.source empty': 'spec.source.type',
  'spec.source with both etcd and persistentVolumeClaim': 'spec.source.persistentVolumeClaim',
};

describe('validateBackupScheduleV1', () => {
  it('accepts the corpus base schedule converted to v1', () => {
    expect(validateBackupScheduleV1(asV1())).toEqual([]);
  });

  it.each(INVALID_CASES.map((c) => [c.name, c] as const))('rejects %s (converted to v1) naming the same field as v1alpha1', (name, c) => {
    const field = V1_FIELD[name] ?? c.field;
    const errors = validateBackupScheduleV1(asV1(c.mutate));
    const hit = errors.find((e) => e.field === field);
    expect(hit, `errors were ${JSON.stringify(errors)}`).toBeDefined();
    expect(hit?.message.startsWith(`${field}: `)).toBe(true);
  });

  it.each([
    ['a retention with no rule', (o: Record<string, any>) => (o.spec.retention = {}), 'spec.retention', 'spec.retention: at least one of keepLast, keepDaily, keepWeekly, keepMonthly must be set'],
    ['keepDaily 0', (o: Record<string, any>) => (o.spec.retention = { keepDaily: 0 }), 'spec.retention.keepDaily', 'spec.retention.keepDaily: must be >= 1'],
    ['keepMonthly 1001', (o: Record<string, any>) => (o.spec.retention = { keepLast: 1, keepMonthly: 1001 }), 'spec.retention.keepMonthly', 'spec.retention.keepMonthly: must be <= 1000'],
    ['a misspelt rule', (o: Record<string, any>) => (o.spec.retention = { keepLast: 1, keepDayly: 3 }), 'spec.retention.keepDayly', 'spec.retention.keepDayly: is not a known field; did you mean "keepDaily"?'],
    ['no source type', (o: Record<string, any>) => delete o.spec.source.type, 'spec.source.type', 'spec.source.type: is required'],
    ['an unknown source type', (o: Record<string, any>) => (o.spec.source.type = 'S3'), 'spec.source.type', 'spec.source.type: must be one of "Etcd", "PersistentVolumeClaim"'],
    ['type PersistentVolumeClaim with an etcd member', (o: Record<string, any>) => (o.spec.source.type = 'PersistentVolumeClaim'), 'spec.source.etcd', 'spec.source.etcd: etcd must be set exactly when type is Etcd'],
    ['the v1alpha1 apiVersion', (o: Record<string, any>) => (o.apiVersion = 'kubelings.dev/v1alpha1'), 'apiVersion', 'apiVersion: must be "kubelings.dev/v1", got "kubelings.dev/v1alpha1"'],
  ])('rejects %s with a message naming the field', (_name, mutate, field, message) => {
    const o = asV1();
    mutate(o);
    expect(validateBackupScheduleV1(o)).toContainEqual({ field, message });
  });

  it('accepts grandfather-father-son rules alone, and no retention at all (the default keepLast 7 applies)', () => {
    expect(validateBackupScheduleV1(asV1((o) => (o.spec.retention = { keepDaily: 7, keepWeekly: 4, keepMonthly: 12 })))).toEqual([]);
    expect(validateBackupScheduleV1(asV1((o) => delete o.spec.retention))).toEqual([]);
  });
});

describe('the v1 schema', () => {
  const spec = (backupScheduleV1Schema['properties'] as Record<string, Record<string, any>>)['spec']!;
  it('defaults retention as a whole to keepLast 7, with no default on a rule (a keepDaily-only policy stays that)', () => {
    expect(spec['properties'].retention.default).toEqual({ keepLast: 7 });
    for (const rule of Object.values(spec['properties'].retention.properties as Record<string, object>)) expect(rule).not.toHaveProperty('default');
  });

  it('shares every spec field but source, destination, retention and encryption, and status, with v1alpha1 node for node', async () => {
    const { backupScheduleSchema } = await import('../../src/api/index.ts');
    const alpha = backupScheduleSchema['properties'] as Record<string, Record<string, any>>;
    const v1 = backupScheduleV1Schema['properties'] as Record<string, Record<string, any>>;
    expect(v1['status']).toBe(alpha['status']);
    for (const [name, node] of Object.entries(spec['properties'] as Record<string, object>)) {
      if (!['source', 'destination', 'retention', 'encryption'].includes(name)) expect(node, name).toBe(alpha['spec']!['properties'][name]);
    }
  });

  it('becomes a CRD openAPIV3Schema with its CEL rules and without the type generator keywords', () => {
    const crd = JSON.stringify(toCrdOpenApiSchema(backupScheduleV1Schema));
    expect(crd).toContain("(self.type == 'Etcd') == has(self.etcd)");
    expect(crd).toContain('has(self.keepLast) || has(self.keepDaily) || has(self.keepWeekly) || has(self.keepMonthly)');
    expect(crd).not.toContain('"title"');
    expect(crd).not.toContain('"tsType"');
  });
});
