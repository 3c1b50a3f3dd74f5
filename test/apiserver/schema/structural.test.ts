import { describe, expect, it } from 'vitest';
import type { StatusCause } from '../../../src/kube/object.ts';
import { widgetSchema } from '../../fixtures/k8s-reference.ts';
import { validateStructuralSchema } from './structural.ts';
import type { JSONSchemaProps } from './types.ts';

const root = 'spec.versions[0].schema.openAPIV3Schema';
const withSpec = (spec: JSONSchemaProps): JSONSchemaProps => ({ type: 'object', properties: { spec } });

describe('validateStructuralSchema', () => {
  it('accepts the recorded Widget schema', () => {
    expect(validateStructuralSchema(widgetSchema())).toEqual([]);
  });

  it.each<[string, JSONSchemaProps, StatusCause[]]>([
    ['a root without type', { properties: {} }, [{ reason: 'FieldValueRequired', field: `${root}.type`, message: 'Required value: must not be empty at the root' }]],
    ['a root that is not an object', { type: 'string' }, [{ reason: 'FieldValueInvalid', field: `${root}.type`, message: 'Invalid value: "string": must be object at the root' }]],
    ['a property without type', withSpec({ type: 'object', properties: { a: {} } }),
      [{ reason: 'FieldValueRequired', field: `${root}.properties[spec].properties[a].type`, message: 'Required value: must not be empty for specified object fields' }]],
    ['array items without type', withSpec({ type: 'array', items: {} }),
      [{ reason: 'FieldValueRequired', field: `${root}.properties[spec].items.type`, message: 'Required value: must not be empty for specified array items' }]],
    ['an array without items', withSpec({ type: 'array' }),
      [{ reason: 'FieldValueRequired', field: `${root}.properties[spec].items`, message: 'Required value: must be specified' }]],
    ['an unknown type', withSpec({ type: 'map' }),
      [{ reason: 'FieldValueNotSupported', field: `${root}.properties[spec].type`, message: 'Unsupported value: "map": supported values: "array", "boolean", "integer", "number", "object", "string"' }]],
    ['properties with additionalProperties', withSpec({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } }),
      [{ reason: 'FieldValueForbidden', field: `${root}.properties[spec].additionalProperties`, message: 'Forbidden: additionalProperties and properties are mutual exclusive' }]],
    ['preserve-unknown-fields false', withSpec({ type: 'object', 'x-kubernetes-preserve-unknown-fields': false }),
      [{ reason: 'FieldValueInvalid', field: `${root}.properties[spec].x-kubernetes-preserve-unknown-fields`, message: 'Invalid value: false: must be true or undefined' }]],
    ['a type inside anyOf', withSpec({ type: 'object', anyOf: [{ type: 'string' }] }),
      [{ reason: 'FieldValueForbidden', field: `${root}.properties[spec].anyOf[0].type`, message: 'Forbidden: must be empty to be structural' }]],
    ['a map list without keys', withSpec({ type: 'array', 'x-kubernetes-list-type': 'map', items: { type: 'object' } }),
      [{ reason: 'FieldValueRequired', field: `${root}.properties[spec].x-kubernetes-list-map-keys`, message: 'Required value: must not be empty if x-kubernetes-list-type is map' }]],
    ['an unknown rule reason', withSpec({ type: 'object', 'x-kubernetes-validations': [{ rule: 'true', reason: 'Nope' }] }),
      [{ reason: 'FieldValueNotSupported', field: `${root}.properties[spec].x-kubernetes-validations[0].reason`, message: 'Unsupported value: "Nope": supported values: "FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"' }]],
    ['additionalProperties: false beside properties', withSpec({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }),
      [{ reason: 'FieldValueForbidden', field: `${root}.properties[spec].additionalProperties`, message: 'Forbidden: additionalProperties and properties are mutual exclusive' }]],
    ['uniqueItems', withSpec({ type: 'array', uniqueItems: true, items: { type: 'string' } }),
      [{ reason: 'FieldValueForbidden', field: `${root}.properties[spec].uniqueItems`, message: 'Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic' }]],
    ['additionalProperties without type', withSpec({ type: 'object', additionalProperties: {} }),
      [{ reason: 'FieldValueRequired', field: `${root}.properties[spec].additionalProperties.type`, message: 'Required value: must not be empty for specified object fields' }]],
    ['additionalProperties at the root', { type: 'object', additionalProperties: { type: 'string' } },
      [{ reason: 'FieldValueForbidden', field: `${root}.additionalProperties`, message: 'Forbidden: must not be used at the root' }]],
    ['a default in top-level metadata', { type: 'object', properties: { metadata: { type: 'object', default: {} } } },
      [{ reason: 'FieldValueForbidden', field: `${root}.properties[metadata].default`, message: 'Forbidden: must not be set in top-level metadata' }]],
    ['metadata restricting more than name', { type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } },
      [{ reason: 'FieldValueForbidden', field: `${root}.properties[metadata]`, message: 'Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified' }]],
    ['list-type on a non-array', withSpec({ type: 'object', 'x-kubernetes-list-type': 'set' }),
      [{ reason: 'FieldValueInvalid', field: `${root}.properties[spec].type`, message: 'Invalid value: "object": must be array if x-kubernetes-list-type is specified' }]],
    ['an empty rule', withSpec({ type: 'object', 'x-kubernetes-validations': [{ rule: ' ' }] }),
      [{ reason: 'FieldValueRequired', field: `${root}.properties[spec].x-kubernetes-validations[0].rule`, message: 'Required value: rule is not specified' }]],
    ['oldSelf inside items of an atomic list', withSpec({ type: 'array', items: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf' }] } }),
      [{ reason: 'FieldValueInvalid', field: `${root}.properties[spec].items.x-kubernetes-validations[0].rule`, message: `Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${root}.properties[spec]` }]],
    ['an embedded resource that is not an object', withSpec({ type: 'string', 'x-kubernetes-embedded-resource': true }),
      [
        { reason: 'FieldValueRequired', field: `${root}.properties[spec].properties`, message: 'Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields' },
        { reason: 'FieldValueInvalid', field: `${root}.properties[spec].type`, message: 'Invalid value: "string": must be object if x-kubernetes-embedded-resource is true' },
      ]],
  ])('rejects %s', (_name, schema, expected) => {
    expect(validateStructuralSchema(schema)).toEqual(expected);
  });

  it('rejects a CEL rule that does not compile, naming the rule', () => {
    const causes = validateStructuralSchema(withSpec({ type: 'object', 'x-kubernetes-validations': [{ rule: 'self.a >' }] }));
    expect(causes).toHaveLength(1);
    expect(causes[0]?.field).toBe(`${root}.properties[spec].x-kubernetes-validations[0].rule`);
    expect(causes[0]?.message).toMatch(/^Invalid value: "self\.a >": compilation failed: /);
  });

  it('sorts the structural errors by their text, as kube does', () => {
    const causes = validateStructuralSchema({ type: 'object', properties: { z: {}, a: { type: 'array' } } });
    expect(causes.map((c) => c.field)).toEqual([`${root}.properties[a].items`, `${root}.properties[z].type`]);
  });

  it('accepts oldSelf in map-list items and int-or-string under allOf', () => {
    const item: JSONSchemaProps = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], 'x-kubernetes-validations': [{ rule: 'self == oldSelf' }] };
    expect(validateStructuralSchema(withSpec({ type: 'object', properties: {
      list: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: item },
      q: { 'x-kubernetes-int-or-string': true, allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, { pattern: '^[0-9]' }] },
    } }))).toEqual([]);
  });

  it('accepts int-or-string and preserve-unknown-fields nodes without a type', () => {
    expect(validateStructuralSchema(withSpec({ type: 'object', properties: { q: { 'x-kubernetes-int-or-string': true }, free: { 'x-kubernetes-preserve-unknown-fields': true } } }))).toEqual([]);
  });
});
