import { describe, expect, it } from 'vitest';
import type { StatusCause } from '../../../src/kube/object.ts';
import type { JSONSchemaProps, ValidationRule } from './types.ts';
import { validateCustomResource } from './validate.ts';

const specWith = (rules: ValidationRule[], properties: Record<string, JSONSchemaProps> = {}): JSONSchemaProps => ({
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      'x-kubernetes-validations': rules,
      properties: {
        min: { type: 'integer' },
        max: { type: 'integer' },
        name: { type: 'string' },
        ratio: { type: 'number' },
        tags: { type: 'array', items: { type: 'string' } },
        ...properties,
      },
    },
  },
});

describe('CEL x-kubernetes-validations', () => {
  it.each<[string, ValidationRule, Record<string, unknown>, StatusCause[]]>([
    ['a false rule with a message', { rule: 'self.min <= self.max', message: 'min must not exceed max' }, { min: 5, max: 1 },
      [{ reason: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": min must not exceed max' }]],
    ['a false rule without a message', { rule: 'self.min <= self.max' }, { min: 5, max: 1 },
      [{ reason: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": failed rule: self.min <= self.max' }]],
    ['a rule with fieldPath and reason Forbidden', { rule: 'self.min >= 0', message: 'no negatives', fieldPath: '.min', reason: 'FieldValueForbidden' }, { min: -1 },
      [{ reason: 'FieldValueForbidden', field: 'spec.min', message: 'Forbidden: no negatives' }]],
    ['a rule with reason Required', { rule: 'has(self.name)', message: 'name is needed', reason: 'FieldValueRequired' }, {},
      [{ reason: 'FieldValueRequired', field: 'spec', message: 'Required value: name is needed' }]],
    ['a messageExpression', { rule: 'size(self.tags) <= 2', messageExpression: '"too many tags: " + string(size(self.tags))' }, { tags: ['a', 'b', 'c'] },
      [{ reason: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": too many tags: 3' }]],
    ['a runtime error (missing key)', { rule: 'self.min > 0' }, {},
      [{ reason: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": no such key: min evaluating rule: self.min > 0' }]],
  ])('reports %s', (_name, rule, spec, expected) => {
    expect(validateCustomResource(specWith([rule]), { spec })).toEqual(expected);
  });

  it.each<[string, string, Record<string, unknown>]>([
    ['has() on an absent field', '!has(self.name) || self.name != ""', {}],
    ['string functions', 'self.name.startsWith("a") && self.name.endsWith("z") && self.name.matches("^[a-z]+$") && self.name.contains("b")', { name: 'abz' }],
    ['size() on lists and strings', 'size(self.tags) == 2 && size(self.name) == 3', { tags: ['a', 'b'], name: 'abc' }],
    ['macros all/exists', 'self.tags.all(t, t.size() > 0) && self.tags.exists(t, t == "b")', { tags: ['a', 'b'] }],
    ['integers as CEL int', 'self.min + 1 == 2', { min: 1 }],
    ['numbers as CEL double', 'self.ratio > 0.5', { ratio: 0.75 }],
    ['whole numbers in a number field as double', 'self.ratio == 2.0', { ratio: 2 }],
  ])('evaluates %s', (_name, rule, spec) => {
    expect(validateCustomResource(specWith([{ rule }]), { spec })).toEqual([]);
  });

  it('binds self to the node the rule sits on, at the node path', () => {
    const schema = specWith([], { name: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.size() <= 3', message: 'short names only' }] } });
    expect(validateCustomResource(schema, { spec: { name: 'long' } })).toEqual([
      { reason: 'FieldValueInvalid', field: 'spec.name', message: 'Invalid value: "string": short names only' },
    ]);
  });

  it('evaluates rules on every list item at its index', () => {
    const schema = specWith([], { items: { type: 'array', items: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self % 2 == 0', message: 'even only' }] } } });
    expect(validateCustomResource(schema, { spec: { items: [2, 3, 4, 5] } }).map((c) => c.field)).toEqual(['spec.items[1]', 'spec.items[3]']);
  });

  it('skips transition rules on create and evaluates them with oldSelf on update', () => {
    const schema = specWith([], { name: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'name is immutable' }] } });
    expect(validateCustomResource(schema, { spec: { name: 'b' } })).toEqual([]);
    expect(validateCustomResource(schema, { spec: { name: 'a' } }, { oldObj: { spec: { name: 'a' } } })).toEqual([]);
    expect(validateCustomResource(schema, { spec: { name: 'b' } }, { oldObj: { spec: { name: 'a' } } })).toEqual([
      { reason: 'FieldValueInvalid', field: 'spec.name', message: 'Invalid value: "string": name is immutable' },
    ]);
  });

  it('correlates map-list items by key for oldSelf and skips unkeyed lists', () => {
    const item: JSONSchemaProps = { type: 'object', properties: { name: { type: 'string' }, v: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.v >= oldSelf.v', message: 'v may only grow' }] };
    const schema = specWith([], {
      keyed: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: item },
      plain: { type: 'array', items: item },
    });
    const old = { spec: { keyed: [{ name: 'a', v: 5 }, { name: 'b', v: 1 }], plain: [{ name: 'a', v: 5 }] } };
    const now = { spec: { keyed: [{ name: 'b', v: 2 }, { name: 'a', v: 4 }], plain: [{ name: 'a', v: 1 }] } };
    expect(validateCustomResource(schema, now, { oldObj: old })).toEqual([
      { reason: 'FieldValueInvalid', field: 'spec.keyed[1]', message: 'Invalid value: "object": v may only grow' },
    ]);
  });

  it('does not run CEL when a blocking schema error was found, and says so', () => {
    const schema = specWith([{ rule: 'self.min <= self.max' }]);
    expect(validateCustomResource(schema, { spec: { min: 'x', max: 1 } })).toEqual([
      { reason: 'FieldValueInvalid', field: 'spec.min', message: 'Invalid value: "string": spec.min in body must be of type integer: "string"' },
      { reason: 'FieldValueInvalid', field: '<nil>', message: 'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation' },
    ]);
  });

  it('still runs CEL after a non-blocking error such as a pattern mismatch', () => {
    const schema = specWith([{ rule: 'self.min <= self.max', message: 'order' }], { name: { type: 'string', pattern: '^a' } });
    expect(validateCustomResource(schema, { spec: { name: 'b', min: 2, max: 1 } }).map((c) => c.field)).toEqual(['spec.name', 'spec']);
  });
});
