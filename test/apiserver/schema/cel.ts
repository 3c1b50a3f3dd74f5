import { Environment } from '@marcbachmann/cel-js';
import type { StatusCause } from '../../../src/kube/object.ts';
import { fieldErrors } from './causes.ts';
import { child, index } from './path.ts';
import type { JSONSchemaProps, ValidationRule } from './types.ts';
import { isObject } from './value.ts';

/**
 * CEL `x-kubernetes-validations` as apiextensions-apiserver evaluates them: `self` is the node's
 * value, `oldSelf` the correlated old value; a rule that mentions `oldSelf` (a transition rule) runs
 * only on update when the old value exists. A false rule → `FieldValueInvalid` (or the rule's
 * `reason`) with the rule's message or `failed rule: <rule>`, reported at the node (or `fieldPath`).
 */
const env = new Environment({ unlistedVariablesAreDyn: true, homogeneousAggregateLiterals: false })
  .registerVariable('self', 'dyn')
  .registerVariable('oldSelf', 'dyn');

type Program = ReturnType<typeof env.parse>;
const programs = new Map<string, Program>();

/** Parses (and caches) a rule; throws the library's error when it does not compile. */
export function compileRule(rule: string): Program {
  let program = programs.get(rule);
  if (!program) {
    program = env.parse(rule);
    programs.set(rule, program);
  }
  return program;
}

/** The first line of a cel-js error (the rest is a source pointer). */
export function celErrorText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const first = text.split('\n')[0] ?? text;
  // cel-go words this runtime error in lower case ("no such key: x"), which is what kube prints.
  return first.startsWith('No such key') ? `n${first.slice(1)}` : first;
}

/** Whether a rule reads `oldSelf` (kube: "transition rule"). */
export function isTransitionRule(rule: string): boolean {
  return /\boldSelf\b/.test(rule);
}

/** Walks schema and value and evaluates every rule; causes are appended to `out`. */
export function validateCel(schema: JSONSchemaProps, value: unknown, old: unknown, path: string, out: StatusCause[]): void {
  if (value === undefined || value === null) return;
  const rules = schema['x-kubernetes-validations'];
  if (rules?.length) {
    const self = toCel(schema, value);
    const oldSelf = old === undefined || old === null ? undefined : toCel(schema, old);
    for (const rule of rules) evaluateRule(schema, rule, self, oldSelf, path, out);
  }
  if (Array.isArray(value) && schema.items) {
    const items = schema.items;
    const oldList = Array.isArray(old) ? old : undefined;
    value.forEach((item, i) => validateCel(items, item, correlate(schema, item, oldList), index(path, i), out));
  } else if (isObject(value)) {
    const oldObj = isObject(old) ? old : undefined;
    for (const name of Object.keys(value).sort()) {
      const prop = schema.properties?.[name] ?? (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
      if (prop) validateCel(prop, value[name], oldObj?.[name], child(path, name), out);
    }
  }
}

/** Old list items correlate only for `x-kubernetes-list-type: map` (by keys), as in kube. */
function correlate(schema: JSONSchemaProps, item: unknown, oldList: unknown[] | undefined): unknown {
  const keys = schema['x-kubernetes-list-map-keys'];
  if (!oldList || schema['x-kubernetes-list-type'] !== 'map' || !keys?.length || !isObject(item)) return undefined;
  return oldList.find((o) => isObject(o) && keys.every((k) => o[k] === item[k]));
}

function evaluateRule(schema: JSONSchemaProps, rule: ValidationRule, self: unknown, oldSelf: unknown, path: string, out: StatusCause[]): void {
  if (isTransitionRule(rule.rule) && oldSelf === undefined) return;
  const at = rule.fieldPath ? joinFieldPath(path, rule.fieldPath) : path;
  const typeName = schema.type ?? (schema['x-kubernetes-int-or-string'] ? 'integer-or-string' : 'object');
  let result: unknown;
  try {
    result = compileRule(rule.rule)({ self, oldSelf });
  } catch (err) {
    out.push(fieldErrors.invalid(at, typeName, `${celErrorText(err)} evaluating rule: ${ruleText(rule.rule)}`));
    return;
  }
  if (result === true) return;
  if (result !== false) {
    out.push(fieldErrors.invalid(at, typeName, `rule did not evaluate to a bool: ${ruleText(rule.rule)}`));
    return;
  }
  const message = messageFor(rule, self, oldSelf);
  switch (rule.reason) {
    case 'FieldValueForbidden':
      out.push(fieldErrors.forbidden(at, message));
      break;
    case 'FieldValueRequired':
      out.push(fieldErrors.required(at, message));
      break;
    case 'FieldValueDuplicate':
      out.push(fieldErrors.duplicate(at, typeName));
      break;
    default:
      out.push(fieldErrors.invalid(at, typeName, message));
  }
}

function messageFor(rule: ValidationRule, self: unknown, oldSelf: unknown): string {
  if (rule.messageExpression) {
    try {
      const text = compileRule(rule.messageExpression)({ self, oldSelf });
      if (typeof text === 'string' && text.trim() !== '') return text;
    } catch {
      // kube falls back to the static message when messageExpression fails at runtime.
    }
  }
  return rule.message ?? `failed rule: ${ruleText(rule.rule)}`;
}

/** kube prints the rule on one line, trimmed. */
function ruleText(rule: string): string {
  return rule.trim().replace(/\s*\n\s*/g, ' ');
}

/** `spec` + `.a.b` / `['a']` → `spec.a.b` / `spec.a` (kube's relative JSON path for fieldPath). */
function joinFieldPath(path: string, fieldPath: string): string {
  let result = path;
  for (const part of fieldPath.matchAll(/\.([^.[\]]+)|\[['"]([^'"]+)['"]\]|\[(\d+)\]/g)) {
    if (part[1] !== undefined) result = child(result, part[1]);
    else if (part[2] !== undefined) result = child(result, part[2]);
    else if (part[3] !== undefined) result = index(result, Number(part[3]));
  }
  return result;
}

/** JSON → CEL values: integers become CEL `int` (BigInt) unless the schema says `number`. */
function toCel(schema: JSONSchemaProps | undefined, value: unknown): unknown {
  if (typeof value === 'number') {
    return Number.isInteger(value) && schema?.type !== 'number' ? BigInt(value) : value;
  }
  if (Array.isArray(value)) return value.map((item) => toCel(schema?.items, item));
  if (isObject(value)) {
    const result: Record<string, unknown> = {};
    for (const [name, v] of Object.entries(value)) {
      const prop = schema?.properties?.[name] ?? (isObject(schema?.additionalProperties) ? schema.additionalProperties : undefined);
      result[name] = toCel(prop, v);
    }
    return result;
  }
  return value;
}
