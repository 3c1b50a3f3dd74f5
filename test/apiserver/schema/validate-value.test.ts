import { describe, expect, it } from 'vitest';
import type { StatusCause } from '../../../src/kube/object.ts';
import { loadStatus, widgetSchema } from '../../fixtures/k8s-reference.ts';
import type { JSONSchemaProps } from './types.ts';
import { validateCustomResource } from './validate.ts';

const widget = (spec: unknown, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'fixtures.example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'kubelings' },
  spec,
  ...extra,
});

const byField = (causes: readonly StatusCause[]) => [...causes].sort((a, b) => (a.field ?? '').localeCompare(b.field ?? ''));

describe('validateCustomResource against the recorded Widget answers', () => {
  it('reports every cause of error-422-cr-multiple-causes.json, ordered by field path', () => {
    const recorded = loadStatus('error-422-cr-multiple-causes.json').details?.causes ?? [];
    const causes = validateCustomResource(
      widgetSchema(),
      widget({ schedule: 5, size: 11, mode: 'Slow', tags: ['a', 'b', 'c', 'd'], nested: { keep: -1 } }),
    );
    // 1.20 iterated a Go map (random order); we visit properties sorted, so compare as sorted lists.
    expect(causes).toEqual(byField(recorded));
    expect(causes.map((c) => c.field)).toEqual(['spec.mode', 'spec.nested.keep', 'spec.schedule', 'spec.size', 'spec.tags']);
  });

  it('reports a missing required field exactly as error-422-cr-required.json', () => {
    const recorded = loadStatus('error-422-cr-required.json').details?.causes;
    expect(validateCustomResource(widgetSchema(), widget({ size: 3 }))).toEqual(recorded);
  });

  it('reports a pattern mismatch exactly as error-422-cr-pattern.json', () => {
    const recorded = loadStatus('error-422-cr-pattern.json').details?.causes;
    expect(validateCustomResource(widgetSchema(), widget({ schedule: 'every day' }))).toEqual(recorded);
  });

  it('reports an enum violation inside a list item with its index (1.20 omitted the index)', () => {
    const recorded = loadStatus('error-422-status-invalid.json').details?.causes?.[0];
    const causes = validateCustomResource(
      widgetSchema(),
      widget({ schedule: '@daily' }, { status: { conditions: [{ type: 'Ready', status: 'Maybe' }] } }),
    );
    expect(causes).toEqual([{ ...recorded, field: 'status.conditions[0].status' }]);
  });

  it('accepts a valid Widget, including an int-or-string quantity of either type', () => {
    const schema = widgetSchema();
    expect(validateCustomResource(schema, widget({ schedule: '0 2 * * *', size: 10, quantity: '10Gi', free: { x: [1] } }))).toEqual([]);
    expect(validateCustomResource(schema, widget({ schedule: '0 2 * * *', quantity: 3 }))).toEqual([]);
  });
});

describe('validateCustomResource value rules', () => {
  const at = (schema: JSONSchemaProps, value: unknown) => validateCustomResource({ type: 'object', properties: { f: schema } }, { f: value });

  it.each<[string, JSONSchemaProps, unknown, StatusCause[]]>([
    ['maxLength', { type: 'string', maxLength: 3 }, 'abcd', [{ reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: "abcd": f in body should be at most 3 chars long' }]],
    ['minLength', { type: 'string', minLength: 2 }, 'a', [{ reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: "a": f in body should be at least 2 chars long' }]],
    ['minItems', { type: 'array', minItems: 2, items: { type: 'string' } }, ['a'], [{ reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: 1: f in body should have at least 2 items' }]],
    ['exclusiveMaximum', { type: 'number', maximum: 5, exclusiveMaximum: true }, 5, [{ reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: 5: f in body should be less than 5' }]],
    ['exclusiveMinimum', { type: 'integer', minimum: 0, exclusiveMinimum: true }, 0, [{ reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: 0: f in body should be greater than 0' }]],
    ['multipleOf', { type: 'integer', multipleOf: 5 }, 7, [{ reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: 7: f in body should be a multiple of 5' }]],
    ['integer given a float', { type: 'integer' }, 1.5, [{ reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: "number": f in body must be of type integer: "number"' }]],
    ['null in a non-nullable field', { type: 'string' }, null, [{ reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: "null": f in body must be of type string: "null"' }]],
    ['object given an array', { type: 'object' }, [], [{ reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: "array": f in body must be of type object: "array"' }]],
    ['date-time format', { type: 'string', format: 'date-time' }, 'yesterday', [{ reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: "yesterday": f in body must be of type date-time: "yesterday"' }]],
    ['uuid format', { type: 'string', format: 'uuid' }, 'nope', [{ reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: "nope": f in body must be of type uuid: "nope"' }]],
    ['integer enum', { type: 'integer', enum: [1, 2] }, 3, [{ reason: 'FieldValueNotSupported', field: 'f', message: 'Unsupported value: 3: supported values: "1", "2"' }]],
    ['maxProperties', { type: 'object', maxProperties: 1, additionalProperties: { type: 'string' } }, { a: 'x', b: 'y' }, [{ reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: 2: f in body should have at most 1 properties' }]],
    ['additionalProperties values', { type: 'object', additionalProperties: { type: 'integer' } }, { a: 'x' }, [{ reason: 'FieldValueInvalid', field: 'f.a', message: 'Invalid value: "string": f.a in body must be of type integer: "string"' }]],
    ['set list duplicates', { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } }, ['a', 'a'], [{ reason: 'FieldValueDuplicate', field: 'f[1]', message: 'Duplicate value: "a"' }]],
    ['map list duplicate keys', { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', properties: { name: { type: 'string' } } } }, [{ name: 'a' }, { name: 'a' }], [{ reason: 'FieldValueDuplicate', field: 'f[1]', message: 'Duplicate value: {"name":"a"}' }]],
    ['int-or-string given a bool', { 'x-kubernetes-int-or-string': true }, true, [
      { reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: "": f must validate at least one schema (anyOf)' },
      { reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: "boolean": f in body must be of type integer: "boolean"' },
    ]],
    ['not', { type: 'string', not: { enum: ['x'] } }, 'x', [{ reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: "": f must not validate the schema (not)' }]],
    ['oneOf', { type: 'integer', oneOf: [{ minimum: 0 }, { maximum: 10 }] }, 5, [{ reason: 'FieldValueInvalid', field: 'f', message: 'Invalid value: "": f must validate one and only one schema (oneOf)' }]],
  ])('reports %s with kube-openapi wording', (_name, schema, value, expected) => {
    expect(at(schema, value)).toEqual(expected);
  });

  it.each<[string, JSONSchemaProps, unknown]>([
    ['a null in a nullable field', { type: 'string', nullable: true }, null],
    ['a date-time with offset', { type: 'string', format: 'date-time' }, '2026-11-30T00:05:38+01:00'],
    ['an int64 format (not checked by kube)', { type: 'integer', format: 'int64' }, 5],
    ['a unicode string counted in characters', { type: 'string', maxLength: 2 }, 'ää'],
    ['a value inside a preserved object', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, { any: { thing: 1 } }],
  ])('accepts %s', (_name, schema, value) => {
    expect(at(schema, value)).toEqual([]);
  });

  it('requires apiVersion and kind of an embedded resource', () => {
    const schema: JSONSchemaProps = { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true };
    expect(at(schema, { kind: 5 })).toEqual([
      { reason: 'FieldValueRequired', field: 'f.apiVersion', message: 'Required value: must not be empty' },
      { reason: 'FieldValueInvalid', field: 'f.kind', message: 'Invalid value: 5: must be a string' },
    ]);
    expect(at(schema, { apiVersion: 'v1', kind: 'ConfigMap' })).toEqual([]);
  });

  it('lists items by index and recurses into their properties', () => {
    const schema: JSONSchemaProps = { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } };
    expect(at(schema, [{ name: 'a' }, {}])).toEqual([{ reason: 'FieldValueRequired', field: 'f[1].name', message: 'Required value' }]);
  });
});
