import type { StatusCause } from '../../../src/kube/object.ts';
import { fieldErrors } from './causes.ts';
import { checkFormat } from './formats.ts';
import { child, index } from './path.ts';
import type { JSONSchemaProps } from './types.ts';
import { isObject, jsonEqual, jsonTypeOf } from './value.ts';

/**
 * OpenAPI value validation of a custom resource, as kube-openapi's `SchemaValidator` does it for
 * apiextensions-apiserver, with its errors converted to causes the way `ValidateCustomResource`
 * converts them (required → FieldValueRequired, enum → FieldValueNotSupported, the rest →
 * FieldValueInvalid with `<path> in body ...` details).
 *
 * Validators run per node in kube-openapi's order: type, allOf/anyOf/oneOf/not, string, format,
 * number, array, enum, object. Properties are visited in sorted order so that causes come out in
 * a stable order (Go map iteration made 1.20's order random).
 */
export interface Sink {
  /** Causes in the order found. */
  readonly causes: StatusCause[];
  /** Set by errors that make kube skip CEL rules (`hasBlockingErr`): type, required, enum, too long, too many. */
  blocking: boolean;
}

function report(out: Sink, cause: StatusCause, blocking = false): void {
  out.causes.push(cause);
  if (blocking) out.blocking = true;
}

/** Validates `value` at `path` (the root is `''`), appending causes to `out`. */
export function validateValue(schema: JSONSchemaProps, value: unknown, path: string, out: Sink): void {
  if (value === null || value === undefined) {
    // kube-openapi: a null passes a nullable schema (and any schema without a type), else it is a type error.
    if (schema.nullable || !schema.type) return;
    report(out, typeError(schema.type, value, path), true);
    return;
  }
  if (schema.type && !typeMatches(schema.type, value)) {
    report(out, typeError(schema.type, value, path), true);
    return;
  }
  // apiextensions turns x-kubernetes-int-or-string into anyOf [integer, string] for validation.
  validateCombinators(schema['x-kubernetes-int-or-string'] && !schema.anyOf ? { ...schema, anyOf: intOrString } : schema, value, path, out);
  if (typeof value === 'string') validateString(schema, value, path, out);
  if (typeof value === 'number') validateNumber(schema, value, path, out);
  if (Array.isArray(value)) validateArray(schema, value, path, out);
  if (schema.enum && !schema.enum.some((allowed) => jsonEqual(allowed, value))) {
    const supported = schema.enum.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    report(out, fieldErrors.notSupported(path, value, supported), true);
  }
  if (isObject(value)) validateObject(schema, value, path, out);
}

const intOrString: JSONSchemaProps[] = [{ type: 'integer' }, { type: 'string' }];

function isInteger(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value);
}

function typeMatches(type: string, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      return true;
  }
}

/** `<path> in body must be of type <type>: "<actual>"`, reported with the actual type as the value. */
function typeError(type: string, value: unknown, path: string, typeName = type): StatusCause {
  const actual = jsonTypeOf(value);
  return fieldErrors.invalid(path, actual, `${body(path)} must be of type ${typeName}: ${JSON.stringify(actual)}`);
}

/** kube-openapi names the root `body` and every other node `<path> in body`. */
function body(path: string): string {
  return path === '' ? 'body' : `${path} in body`;
}

/** Composite (allOf/anyOf/oneOf/not) errors name the path without "in body" and carry no value. */
function composite(path: string): string {
  return path === '' ? '.' : path;
}

function collect(schema: JSONSchemaProps, value: unknown, path: string): StatusCause[] {
  const sink: Sink = { causes: [], blocking: false };
  validateValue(schema, value, path, sink);
  return sink.causes;
}

function validateCombinators(schema: JSONSchemaProps, value: unknown, path: string, out: Sink): void {
  if (schema.allOf) {
    const errs = schema.allOf.flatMap((s) => collect(s, value, path));
    if (errs.length) {
      report(out, fieldErrors.invalid(path, '', `${composite(path)} must validate all the schemas (allOf)`));
      out.causes.push(...errs);
    }
  }
  if (schema.anyOf) {
    const results = schema.anyOf.map((s) => collect(s, value, path));
    if (!results.some((errs) => errs.length === 0)) {
      report(out, fieldErrors.invalid(path, '', `${composite(path)} must validate at least one schema (anyOf)`));
      // kube-openapi merges the failures of the best-scoring alternative; we take the one with fewest errors.
      out.causes.push(...results.reduce((best, errs) => (errs.length < best.length ? errs : best)));
    }
  }
  if (schema.oneOf) {
    const passing = schema.oneOf.filter((s) => collect(s, value, path).length === 0).length;
    if (passing !== 1) {
      report(out, fieldErrors.invalid(path, '', `${composite(path)} must validate one and only one schema (oneOf)`));
    }
  }
  if (schema.not && collect(schema.not, value, path).length === 0) {
    report(out, fieldErrors.invalid(path, '', `${composite(path)} must not validate the schema (not)`));
  }
}

function validateString(schema: JSONSchemaProps, value: string, path: string, out: Sink): void {
  // kube-openapi counts characters (runes), not UTF-16 code units.
  const length = [...value].length;
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    report(out, fieldErrors.invalid(path, value, `${body(path)} should be at most ${schema.maxLength} chars long`), true);
  }
  if (schema.minLength !== undefined && length < schema.minLength) {
    report(out, fieldErrors.invalid(path, value, `${body(path)} should be at least ${schema.minLength} chars long`));
  }
  if (schema.pattern !== undefined && !compilePattern(schema.pattern).test(value)) {
    report(out, fieldErrors.invalid(path, value, `${body(path)} should match '${schema.pattern}'`));
  }
  if (schema.format !== undefined && !checkFormat(schema.format, value)) {
    report(out, fieldErrors.invalid(path, value, `${body(path)} must be of type ${schema.format}: ${JSON.stringify(value)}`));
  }
}

const patternCache = new Map<string, RegExp>();

/** ECMA-262 regexps are what the OpenAPI pattern means; Go's RE2 accepts a near-identical subset. */
export function compilePattern(pattern: string): RegExp {
  let re = patternCache.get(pattern);
  if (!re) {
    re = new RegExp(pattern, 'u');
    patternCache.set(pattern, re);
  }
  return re;
}

function validateNumber(schema: JSONSchemaProps, value: number, path: string, out: Sink): void {
  if (schema.multipleOf !== undefined && schema.multipleOf !== 0 && !Number.isInteger(value / schema.multipleOf)) {
    report(out, fieldErrors.invalid(path, value, `${body(path)} should be a multiple of ${schema.multipleOf}`));
  }
  if (schema.maximum !== undefined) {
    const bad = schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum;
    if (bad) {
      const op = schema.exclusiveMaximum ? 'less than' : 'less than or equal to';
      report(out, fieldErrors.invalid(path, value, `${body(path)} should be ${op} ${schema.maximum}`));
    }
  }
  if (schema.minimum !== undefined) {
    const bad = schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum;
    if (bad) {
      const op = schema.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
      report(out, fieldErrors.invalid(path, value, `${body(path)} should be ${op} ${schema.minimum}`));
    }
  }
}

function validateArray(schema: JSONSchemaProps, value: unknown[], path: string, out: Sink): void {
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    report(out, fieldErrors.invalid(path, value.length, `${body(path)} should have at least ${schema.minItems} items`));
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    report(out, fieldErrors.invalid(path, value.length, `${body(path)} should have at most ${schema.maxItems} items`), true);
  }
  const listType = schema['x-kubernetes-list-type'];
  if (schema.uniqueItems || listType === 'set') {
    value.forEach((item, i) => {
      if (value.slice(0, i).some((earlier) => jsonEqual(earlier, item))) report(out, fieldErrors.duplicate(index(path, i), item));
    });
  }
  if (listType === 'map') validateListMapKeys(schema['x-kubernetes-list-map-keys'] ?? [], value, path, out);
  if (schema.items) {
    const items = schema.items;
    value.forEach((item, i) => validateValue(items, item, index(path, i), out));
  }
}

/** `x-kubernetes-list-type: map` entries must be unique by their keys (apiextensions listtype validation). */
function validateListMapKeys(keys: readonly string[], value: unknown[], path: string, out: Sink): void {
  const seen = new Set<string>();
  value.forEach((item, i) => {
    if (!isObject(item)) return;
    const id = JSON.stringify(keys.map((k) => item[k] ?? null));
    if (seen.has(id)) {
      const dup: Record<string, unknown> = {};
      for (const k of keys) dup[k] = item[k];
      report(out, fieldErrors.duplicate(index(path, i), dup));
    }
    seen.add(id);
  });
}

function validateObject(schema: JSONSchemaProps, value: Record<string, unknown>, path: string, out: Sink): void {
  const count = Object.keys(value).length;
  if (schema.maxProperties !== undefined && count > schema.maxProperties) {
    report(out, fieldErrors.invalid(path, count, `${body(path)} should have at most ${schema.maxProperties} properties`), true);
  }
  if (schema.minProperties !== undefined && count < schema.minProperties) {
    report(out, fieldErrors.invalid(path, count, `${body(path)} should have at least ${schema.minProperties} properties`));
  }
  if (schema['x-kubernetes-embedded-resource']) validateEmbeddedTypeMeta(value, path, out);
  for (const name of schema.required ?? []) {
    if (!(name in value)) report(out, fieldErrors.required(child(path, name)), true);
  }
  const properties = schema.properties ?? {};
  for (const name of Object.keys(value).sort()) {
    const propSchema = properties[name];
    if (propSchema) {
      validateValue(propSchema, value[name], child(path, name), out);
    } else if (isObject(schema.additionalProperties)) {
      validateValue(schema.additionalProperties, value[name], child(path, name), out);
    }
  }
}

/** `validateEmbeddedResource` (schema/objectmeta): an embedded object needs string apiVersion and kind. */
function validateEmbeddedTypeMeta(value: Record<string, unknown>, path: string, out: Sink): void {
  for (const name of ['apiVersion', 'kind']) {
    const v = value[name];
    if (v === undefined) report(out, fieldErrors.required(child(path, name), 'must not be empty'), true);
    else if (typeof v !== 'string') report(out, fieldErrors.invalid(child(path, name), v, 'must be a string'));
    else if (v === '') report(out, fieldErrors.invalid(child(path, name), v, 'must not be empty'));
  }
}
