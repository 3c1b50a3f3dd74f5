import type { StatusCause } from '../../../src/kube/object.ts';
import { fieldErrors } from './causes.ts';
import { celErrorText, compileRule, isTransitionRule } from './cel.ts';
import type { JSONSchemaProps } from './types.ts';

const openapiV3Types = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const ruleReasons = ['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate'];
const metaFields = new Set(['metadata', 'apiVersion', 'kind']);

/** Context passed down the schema, like apiextensions' `specStandardValidator` clones. */
interface Context {
  readonly isRoot: boolean;
  /** Why `default` is forbidden here, or undefined when allowed. */
  readonly forbidDefaults?: string;
  /** The path above which oldSelf cannot be correlated (items of non-map lists, atomic maps). */
  readonly uncorrelatable?: string;
}

/** Schema errors and CEL errors are kept apart: kube skips CEL compilation below schema errors. */
export interface OpenAPISchemaErrors {
  readonly schema: StatusCause[];
  readonly cel: StatusCause[];
}

/**
 * `ValidateCustomResourceDefinitionOpenAPISchema` (apiextensions-apiserver pkg/apis/apiextensions/
 * validation): the per-node rules of a CRD's schema — known types, no `type: null`, no `$ref`,
 * `uniqueItems`, `additionalProperties` beside `properties`, `default` in top-level metadata,
 * `x-kubernetes-preserve-unknown-fields: false`, list/map-type rules, rule syntax, and compilation of
 * the CEL rules (including `oldSelf` where old values cannot be correlated).
 */
export function validateCrdOpenAPISchema(schema: JSONSchemaProps, path: string): OpenAPISchemaErrors {
  const out: OpenAPISchemaErrors = { schema: [], cel: [] };
  visit(schema, path, { isRoot: true }, out);
  return out;
}

function visit(s: JSONSchemaProps, path: string, ctx: Context, out: OpenAPISchemaErrors): void {
  const raw = s as Record<string, unknown>;
  const before = out.schema.length;
  if (s.type && !openapiV3Types.includes(s.type)) out.schema.push(fieldErrors.notSupported(`${path}.type`, s.type, openapiV3Types));
  if (s.default !== undefined && ctx.forbidDefaults) out.schema.push(fieldErrors.forbidden(`${path}.default`, `must not be set ${ctx.forbidDefaults}`));
  for (const [key, name] of [['id', 'id'], ['additionalItems', 'additionalItems'], ['patternProperties', 'patternProperties'], ['definitions', 'definitions'], ['dependencies', 'dependencies'], ['$ref', '$ref']] as const) {
    if (raw[key] !== undefined) out.schema.push(fieldErrors.forbidden(`${path}.${key}`, `${name} is not supported`));
  }
  if (s.type === 'null') out.schema.push(fieldErrors.forbidden(`${path}.type`, 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(raw['items'])) out.schema.push(fieldErrors.forbidden(`${path}.items`, 'items must be a schema object and not an array'));
  if (s.uniqueItems === true) {
    out.schema.push(fieldErrors.forbidden(`${path}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  }
  if (s.additionalProperties !== undefined) {
    if (Object.keys(s.properties ?? {}).length > 0 && s.additionalProperties !== true) {
      out.schema.push(fieldErrors.forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
    }
    if (typeof s.additionalProperties === 'object') visit(s.additionalProperties, `${path}.additionalProperties`, { ...ctx, isRoot: false }, out);
  }
  for (const name of Object.keys(s.properties ?? {}).sort()) {
    const prop = s.properties?.[name];
    if (!prop) continue;
    let sub: Context = { ...ctx, isRoot: false };
    if (s['x-kubernetes-map-type'] === 'atomic' && !sub.uncorrelatable) sub = { ...sub, uncorrelatable: path };
    if ((ctx.isRoot || s['x-kubernetes-embedded-resource']) && metaFields.has(name) && ctx.isRoot) sub = { ...sub, forbidDefaults: `in top-level ${name}` };
    visit(prop, `${path}.properties[${name}]`, sub, out);
  }
  if (s.not) visit(s.not, `${path}.not`, { ...ctx, isRoot: false }, out);
  for (const key of ['allOf', 'oneOf', 'anyOf'] as const) s[key]?.forEach((sub, i) => visit(sub, `${path}.${key}[${i}]`, { ...ctx, isRoot: false }, out));
  if (s.items && !Array.isArray(s.items)) {
    const uncorrelatable = s['x-kubernetes-list-type'] !== 'map' ? (ctx.uncorrelatable ?? path) : ctx.uncorrelatable;
    visit(s.items, `${path}.items`, { ...ctx, isRoot: false, ...(uncorrelatable !== undefined ? { uncorrelatable } : {}) }, out);
  }
  if (s['x-kubernetes-preserve-unknown-fields'] === false) {
    out.schema.push(fieldErrors.invalid(`${path}.x-kubernetes-preserve-unknown-fields`, false, 'must be true or undefined'));
  }
  checkMapAndListTypes(s, path, out.schema);
  checkRules(s, path, ctx, out, out.schema.length > before);
}

function checkMapAndListTypes(s: JSONSchemaProps, path: string, out: StatusCause[]): void {
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined && s.type !== 'object') {
    out.push(s.type ? fieldErrors.invalid(`${path}.type`, s.type, 'must be object if x-kubernetes-map-type is specified') : fieldErrors.required(`${path}.type`, 'must be object if x-kubernetes-map-type is specified'));
  }
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') out.push(fieldErrors.notSupported(`${path}.x-kubernetes-map-type`, mapType, ['atomic', 'granular']));
  const listType = s['x-kubernetes-list-type'];
  if (listType !== undefined && s.type !== 'array') {
    out.push(s.type ? fieldErrors.invalid(`${path}.type`, s.type, 'must be array if x-kubernetes-list-type is specified') : fieldErrors.required(`${path}.type`, 'must be array if x-kubernetes-list-type is specified'));
  }
  if (listType !== undefined && !['atomic', 'set', 'map'].includes(listType)) out.push(fieldErrors.notSupported(`${path}.x-kubernetes-list-type`, listType, ['atomic', 'set', 'map']));
  const keys = s['x-kubernetes-list-map-keys'] ?? [];
  if (keys.length > 0 && listType === undefined) out.push(fieldErrors.required(`${path}.x-kubernetes-list-type`, 'must be map if x-kubernetes-list-map-keys is non-empty'));
  else if (keys.length > 0 && listType !== 'map') out.push(fieldErrors.invalid(`${path}.x-kubernetes-list-type`, listType, 'must be map if x-kubernetes-list-map-keys is non-empty'));
  if (listType !== 'map') return;
  if (keys.length === 0) out.push(fieldErrors.required(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
  if (!s.items) {
    out.push(fieldErrors.required(`${path}.items`, 'must have a schema if x-kubernetes-list-type is map'));
    return;
  }
  if (s.items.type !== 'object') {
    out.push(fieldErrors.invalid(`${path}.items.type`, s.items.type ?? '', "must be object if parent array's x-kubernetes-list-type is map"));
    return;
  }
  const seen = new Set<string>();
  for (const key of keys) {
    const prop = s.items.properties?.[key];
    if (!prop) out.push(fieldErrors.invalid(`${path}.x-kubernetes-list-map-keys`, keys, 'entries must all be names of item properties'));
    else if (prop.type === 'array' || prop.type === 'object') {
      out.push(fieldErrors.invalid(`${path}.items.properties[${key}].type`, s.items.type, "must be a scalar type if parent array's x-kubernetes-list-type is map"));
    }
    if (seen.has(key)) out.push(fieldErrors.invalid(`${path}.x-kubernetes-list-map-keys`, keys, 'must not contain duplicate entries'));
    seen.add(key);
  }
}

function checkRules(s: JSONSchemaProps, path: string, ctx: Context, out: OpenAPISchemaErrors, schemaErrorsHere: boolean): void {
  const rules = s['x-kubernetes-validations'] ?? [];
  rules.forEach((rule, i) => {
    const at = `${path}.x-kubernetes-validations[${i}]`;
    const trimmedRule = (rule.rule ?? '').trim();
    const trimmedMessage = (rule.message ?? '').trim();
    if (trimmedRule === '') out.schema.push(fieldErrors.required(`${at}.rule`, 'rule is not specified'));
    else if ((rule.message ?? '') !== '' && trimmedMessage === '') out.schema.push(fieldErrors.invalid(`${at}.message`, rule.message, 'message must be non-empty if specified'));
    else if (/[\n\r]/.test(trimmedMessage)) out.schema.push(fieldErrors.invalid(`${at}.message`, rule.message, 'message must not contain line breaks'));
    else if (/[\n\r]/.test(trimmedRule) && trimmedMessage === '') out.schema.push(fieldErrors.required(`${at}.message`, 'message must be specified if rule contains line breaks'));
    if (rule.reason !== undefined && !ruleReasons.includes(rule.reason)) out.schema.push(fieldErrors.notSupported(`${at}.reason`, rule.reason, ruleReasons));
  });
  // Kube compiles CEL only where the schema at and below this node is valid.
  if (schemaErrorsHere) return;
  rules.forEach((rule, i) => {
    const at = `${path}.x-kubernetes-validations[${i}]`;
    if ((rule.rule ?? '').trim() === '') return;
    try {
      compileRule(rule.rule);
    } catch (err) {
      out.cel.push(fieldErrors.invalid(`${at}.rule`, rule.rule, `compilation failed: ${celErrorText(err)}`));
    }
    if (rule.messageExpression) {
      try {
        compileRule(rule.messageExpression);
      } catch (err) {
        out.cel.push(fieldErrors.invalid(`${at}.messageExpression`, rule.messageExpression, `messageExpression compilation failed: ${celErrorText(err)}`));
      }
    }
    if (isTransitionRule(rule.rule) && ctx.uncorrelatable !== undefined) {
      out.cel.push(fieldErrors.invalid(`${at}.rule`, rule.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${ctx.uncorrelatable}`));
    }
  });
}
