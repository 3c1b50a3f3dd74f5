import type { StatusCause } from '../../../src/kube/object.ts';
import { fieldErrors } from './causes.ts';
import { celErrorText, compileRule } from './cel.ts';
import type { JSONSchemaProps } from './types.ts';

const root = 'spec.versions[0].schema.openAPIV3Schema';
const types = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const reasons = ['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate'];

/** Where a node sits: decides which "type must not be empty" message kube uses. */
type Position = 'root' | 'property' | 'items' | 'additionalProperties' | 'valueValidation';

/**
 * The structural-schema rules apiextensions-apiserver enforces when a CRD is created
 * (`ValidateStructural` and the CRD validation around it), with its messages and its field paths
 * (`...openAPIV3Schema.properties[spec].type`), plus the CEL rules' compilation.
 *
 * Covered: non-empty and known `type` everywhere (unless int-or-string or preserve-unknown-fields),
 * object at the root, `properties` and `additionalProperties` mutually exclusive, `items` required
 * for arrays, `x-kubernetes-preserve-unknown-fields: false` forbidden, int-or-string without a type,
 * `x-kubernetes-list-map-keys` for map lists, `nullable`/`default` only where allowed at the root
 * metadata, no `type`/`default`/`nullable`/... inside allOf/anyOf/oneOf/not, compilable CEL rules
 * with known reasons.
 */
export function validateStructuralSchema(schema: JSONSchemaProps): StatusCause[] {
  const out: StatusCause[] = [];
  visit(schema, root, 'root', out);
  return out;
}

function visit(s: JSONSchemaProps, path: string, position: Position, out: StatusCause[]): void {
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  if (position === 'valueValidation') {
    checkValueValidation(s, path, out);
  } else if (!s.type) {
    if (!intOrString && !preserve) out.push(fieldErrors.required(`${path}.type`, emptyTypeDetail(position)));
  } else if (!types.includes(s.type)) {
    out.push(fieldErrors.notSupported(`${path}.type`, s.type, types));
  }
  if (position === 'root' && s.type && s.type !== 'object') out.push(fieldErrors.invalid(`${path}.type`, s.type, 'must be object at the root'));
  if (intOrString && s.type) out.push(fieldErrors.invalid(`${path}.type`, s.type, 'must be empty if x-kubernetes-int-or-string is true'));
  if (s['x-kubernetes-preserve-unknown-fields'] === false) {
    out.push(fieldErrors.invalid(`${path}.x-kubernetes-preserve-unknown-fields`, false, 'must be true or undefined'));
  }
  if (s.properties && s.additionalProperties !== undefined && s.additionalProperties !== false) {
    out.push(fieldErrors.forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
  }
  if (s.type === 'array' && !s.items && position !== 'valueValidation') out.push(fieldErrors.required(`${path}.items`, 'must be specified'));
  checkListType(s, path, out);
  checkRules(s, path, out);
  for (const [name, prop] of Object.entries(s.properties ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    visit(prop, `${path}.properties[${name}]`, position === 'valueValidation' ? position : 'property', out);
  }
  if (s.items) visit(s.items, `${path}.items`, position === 'valueValidation' ? position : 'items', out);
  if (typeof s.additionalProperties === 'object') {
    visit(s.additionalProperties, `${path}.additionalProperties`, position === 'valueValidation' ? position : 'additionalProperties', out);
  }
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    s[key]?.forEach((sub, i) => {
      // The int-or-string idiom `anyOf: [{type: integer}, {type: string}]` (also under allOf) is allowed.
      if (intOrString && key !== 'oneOf' && isIntOrStringIdiom(sub, key)) return;
      visit(sub, `${path}.${key}[${i}]`, 'valueValidation', out);
    });
  }
  if (s.not) visit(s.not, `${path}.not`, 'valueValidation', out);
}

function isIntOrStringIdiom(sub: JSONSchemaProps, key: 'allOf' | 'anyOf'): boolean {
  const onlyType = (x: JSONSchemaProps) => Object.keys(x).length === 1 && (x.type === 'integer' || x.type === 'string');
  if (key === 'anyOf') return onlyType(sub);
  return Object.keys(sub).length === 1 && (sub.anyOf ?? []).length > 0 && (sub.anyOf ?? []).every(onlyType);
}

function emptyTypeDetail(position: Position): string {
  switch (position) {
    case 'root':
      return 'must not be empty at the root';
    case 'items':
      return 'must not be empty for specified array items';
    case 'additionalProperties':
      return 'must not be empty for specified additionalProperties';
    default:
      return 'must not be empty for specified object fields';
  }
}

/** Inside allOf/anyOf/oneOf/not only value validations are allowed ("must be empty to be structural"). */
function checkValueValidation(s: JSONSchemaProps, path: string, out: StatusCause[]): void {
  for (const key of ['type', 'default', 'nullable', 'additionalProperties', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string'] as const) {
    if (s[key] !== undefined) out.push(fieldErrors.forbidden(`${path}.${key}`, 'must be empty to be structural'));
  }
}

function checkListType(s: JSONSchemaProps, path: string, out: StatusCause[]): void {
  const listType = s['x-kubernetes-list-type'];
  if (listType === undefined) return;
  if (s.type !== 'array') out.push(fieldErrors.invalid(`${path}.x-kubernetes-list-type`, listType, 'must only be used on type=array'));
  if (!['atomic', 'set', 'map'].includes(listType)) out.push(fieldErrors.notSupported(`${path}.x-kubernetes-list-type`, listType, ['atomic', 'set', 'map']));
  if (listType === 'map' && !s['x-kubernetes-list-map-keys']?.length) {
    out.push(fieldErrors.required(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
  }
}

function checkRules(s: JSONSchemaProps, path: string, out: StatusCause[]): void {
  s['x-kubernetes-validations']?.forEach((rule, i) => {
    const at = `${path}.x-kubernetes-validations[${i}]`;
    if (!rule.rule?.trim()) {
      out.push(fieldErrors.required(`${at}.rule`));
      return;
    }
    try {
      compileRule(rule.rule);
    } catch (err) {
      out.push(fieldErrors.invalid(`${at}.rule`, rule.rule, `compilation failed: ${celErrorText(err)}`));
    }
    if (rule.messageExpression) {
      try {
        compileRule(rule.messageExpression);
      } catch (err) {
        out.push(fieldErrors.invalid(`${at}.messageExpression`, rule.messageExpression, `messageExpression compilation failed: ${celErrorText(err)}`));
      }
    }
    if (rule.reason !== undefined && !reasons.includes(rule.reason)) out.push(fieldErrors.notSupported(`${at}.reason`, rule.reason, reasons));
  });
}
