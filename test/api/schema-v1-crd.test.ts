/**
 * The v1 schema as a CRD version's openAPIV3Schema, checked by the test API server's CRD machinery
 * (structural schema rules, CEL compilation, defaulting, validation), so v1 installs and behaves once
 * the CRD serves it; dist/ does not carry v1 yet.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backupScheduleV1Schema, toCrdOpenApiSchema } from '../../src/api/index.ts';
import { validateCrdOpenAPISchema } from '../apiserver/schema/crd-openapi-validation.ts';
import { defaultCustomResource, validateCustomResource, validateStructuralSchema, type JSONSchemaProps } from '../apiserver/schema/index.ts';
import { v1Schedule } from '../conversion/schema-arbitrary.ts';

const schema = toCrdOpenApiSchema(backupScheduleV1Schema) as JSONSchemaProps;
const base = () => ({
  apiVersion: 'kubelings.dev/v1',
  kind: 'BackupSchedule',
  metadata: { name: 'nightly', namespace: 'team-a' },
  spec: { schedule: '@daily', source: { type: 'Etcd', etcd: { endpoints: ['https://e:2379'] } }, destination: { persistentVolumeClaim: { claimName: 'b' } } } as Record<string, unknown>,
});

describe('the v1 schema as a CRD openAPIV3Schema', () => {
  it('is structural, and its CEL rules compile', () => {
    expect(validateStructuralSchema(schema)).toEqual([]);
    expect(validateCrdOpenAPISchema(schema, 'spec.versions[1].schema.openAPIV3Schema')).toEqual({ schema: [], cel: [] });
  });

  it('defaults a left-out retention to keepLast 7, and nothing into a given one', () => {
    const left = base();
    defaultCustomResource(schema, left);
    expect(left.spec['retention']).toEqual({ keepLast: 7 });
    const given = { ...base(), spec: { ...base().spec, retention: { keepDaily: 3 } } };
    defaultCustomResource(schema, given);
    expect(given.spec['retention']).toEqual({ keepDaily: 3 });
  });

  it.each([
    ['an empty retention', { retention: {} }, 'at least one of keepLast, keepDaily, keepWeekly, keepMonthly must be set'],
    ['a source whose type names the other member', { source: { type: 'PersistentVolumeClaim', etcd: { endpoints: ['https://e:2379'] } } }, 'persistentVolumeClaim must be set exactly when type is PersistentVolumeClaim'],
  ])('rejects %s with the rule message, as the API server would', (_name, spec, message) => {
    const causes = validateCustomResource(schema, { ...base(), spec: { ...base().spec, ...spec } });
    expect(causes.map((c) => c.message).join('\n')).toContain(message);
  });

  it('accepts every generated valid v1 object', () => {
    fc.assert(
      fc.property(v1Schedule, (object) => {
        // As the API server does: structural defaults (destination.type of a 0.2.0 object) before validation.
        defaultCustomResource(schema, object);
        expect(validateCustomResource(schema, object)).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });
});
