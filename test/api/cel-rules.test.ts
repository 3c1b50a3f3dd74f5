import { evaluate } from '@marcbachmann/cel-js';
import { describe, expect, it } from 'vitest';
import { backupScheduleSchema, backupScheduleV1Schema, CEL_RULES, CEL_RULES_V1, type BackupSchedule, type CelRule, type SchemaNode } from '../../src/api/index.ts';
import { toV1 } from '../../src/conversion/index.ts';
import { INVALID_CASES, validSchedule } from './invalid-cases.ts';

interface FoundRule { path: string[]; rule: string; message: string; fieldPath?: string }

function schemaRules(node: SchemaNode, path: string[] = []): FoundRule[] {
  const own = ((node['x-kubernetes-validations'] as FoundRule[] | undefined) ?? []).map((r) => ({ ...r, path }));
  const properties = (node['properties'] as Record<string, SchemaNode> | undefined) ?? {};
  return [...own, ...Object.entries(properties).flatMap(([name, child]) => schemaRules(child, [...path, name]))];
}

function at(value: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((v, name) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[name] : undefined), value);
}

const alphaInputs = [validSchedule(), ...INVALID_CASES.map((c) => { const o = validSchedule(); c.mutate(o); return o; })];
/** The same corpus as v1 (where it converts), plus what only v1 can get wrong: the discriminator, an empty retention. */
const v1Inputs: unknown[] = [
  ...alphaInputs.flatMap((o) => { try { return [toV1(o as BackupSchedule)]; } catch { return []; } }),
  ...[{ type: 'Etcd', persistentVolumeClaim: { claimName: 'x' } }, { type: 'PersistentVolumeClaim', etcd: { endpoints: ['https://e:1'] } }, { type: 'Etcd' }].map((source) => ({ spec: { source } })),
  ...[{}, { keepDaily: 1 }, { keepWeekly: 2, keepMonthly: 3 }].map((retention) => ({ spec: { retention } })),
  // The destination union (type defaults to PersistentVolumeClaim) and the object store's own rules.
  ...[
    { type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'b' } },
    { type: 'ObjectStore', persistentVolumeClaim: { claimName: 'b' } },
    { type: 'PersistentVolumeClaim', objectStore: { bucket: 'bkt', credentialsSecretName: 's' } },
    ...[
      { bucket: 'bkt', credentialsSecretName: 's' },
      { bucket: 'a..b', credentialsSecretName: 's', endpoint: 'https://s3.example.com' },
      { bucket: '10.0.0.1', credentialsSecretName: 's', endpoint: 'http://minio:9000' },
      { bucket: '10.0.0.1.example', credentialsSecretName: 's', endpoint: 'http://minio:9000', allowHttp: true },
      { bucket: 'bkt', credentialsSecretName: 's', endpoint: 'http://minio:9000', allowHttp: false, prefix: 'a/../b' },
      { bucket: 'bkt', credentialsSecretName: 's', prefix: './x' },
      { bucket: 'bkt', credentialsSecretName: 's', prefix: 'team-a/etcd..1' },
    ].map((objectStore) => ({ type: 'ObjectStore', objectStore })),
  ].map((destination) => ({ spec: { source: { type: 'Etcd', etcd: { endpoints: ['https://e:1'] } }, destination } })),
  { spec: { source: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'x' } }, destination: { type: 'ObjectStore', objectStore: { bucket: 'bkt', credentialsSecretName: 's' } } } },
];

describe.each([
  ['v1alpha1', backupScheduleSchema, CEL_RULES, alphaInputs],
  ['v1', backupScheduleV1Schema, CEL_RULES_V1, v1Inputs],
] as const)('the %s CEL rules re-implemented in TypeScript', (_version, schema: SchemaNode, rules: readonly CelRule[], inputs: readonly unknown[]) => {
  it('match the x-kubernetes-validations of the schema one to one', () => {
    const fromSchema = schemaRules(schema).map(({ path, rule, message, fieldPath }) => ({ path, rule, message, fieldPath }));
    const mirrored = rules.map(({ path, rule, message, fieldPath }) => ({ path: [...path], rule, message, fieldPath }));
    expect(mirrored).toEqual(fromSchema);
  });

  it.each(rules.map((r) => [r.message, r] as const))('agree with a CEL interpreter on the corpus: %s', (_m, rule) => {
    let evaluated = 0;
    for (const input of inputs) {
      const value = at(input, rule.path);
      if (value === undefined) continue;
      // Only schema-shaped values: CEL runs after the schema checks on the API server.
      let expected: boolean;
      try {
        expected = evaluate(rule.rule, { self: value }) as boolean;
      } catch {
        continue;
      }
      const self = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : { value };
      expect(rule.check(self), JSON.stringify(value)).toBe(expected);
      evaluated += 1;
    }
    expect(evaluated).toBeGreaterThan(0);
  });
});
