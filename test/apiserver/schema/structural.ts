import type { StatusCause } from '../../../src/kube/object.ts';
import { fieldErrors } from './causes.ts';
import { validateCrdOpenAPISchema } from './crd-openapi-validation.ts';
import type { JSONSchemaProps } from './types.ts';

const root = 'spec.versions[0].schema.openAPIV3Schema';

type Level = 'root' | 'item' | 'field';

/**
 * The schema checks kube-apiserver runs when a CRD is created, with its messages and field paths
 * (`spec.versions[0].schema.openAPIV3Schema.properties[spec].type`): first the per-node OpenAPI rules
 * and CEL compilation ({@link validateCrdOpenAPISchema}), then `structuralschema.ValidateStructural`
 * (type everywhere, items for arrays, nothing but value validations inside allOf/anyOf/oneOf/not,
 * metadata restrictions, embedded resources), whose errors kube sorts by their text.
 */
export function validateStructuralSchema(schema: JSONSchemaProps): StatusCause[] {
  const openapi = validateCrdOpenAPISchema(schema, root);
  const structural: StatusCause[] = [];
  invariants(schema, 'root', root, structural);
  const text = (c: StatusCause) => `${c.field ?? ''}: ${c.message ?? ''}`;
  structural.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
  return [...openapi.schema, ...openapi.cel, ...structural];
}

/** `validateStructuralInvariants`. */
function invariants(s: JSONSchemaProps, level: Level, path: string, out: StatusCause[]): void {
  if (s.type === 'array' && !s.items) out.push(fieldErrors.required(`${path}.items`, 'must be specified'));
  if (s.items) invariants(s.items, 'item', `${path}.items`, out);
  for (const [name, prop] of Object.entries(s.properties ?? {})) invariants(prop, 'field', `${path}.properties[${name}]`, out);
  if (s.additionalProperties !== undefined && s.additionalProperties !== false) {
    if (level === 'root') out.push(fieldErrors.forbidden(`${path}.additionalProperties`, 'must not be used at the root'));
    if (typeof s.additionalProperties === 'object') invariants(s.additionalProperties, 'field', `${path}.additionalProperties`, out);
  }
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (intOrString && preserve) out.push(fieldErrors.invalid(`${path}.x-kubernetes-preserve-unknown-fields`, true, 'must be false if x-kubernetes-int-or-string is true'));
  if (intOrString && embedded) out.push(fieldErrors.invalid(`${path}.x-kubernetes-embedded-resource`, true, 'must be false if x-kubernetes-int-or-string is true'));
  const skipAnyOf = isIntOrStringAnyOf(s.anyOf);
  const skipFirstAllOfAnyOf = isIntOrStringAnyOf(s.allOf?.[0]?.anyOf);
  valueValidation(s, skipAnyOf, skipFirstAllOfAnyOf, path, out);
  if (embedded && s.type !== 'object') {
    const detail = 'must be object if x-kubernetes-embedded-resource is true';
    out.push(s.type ? fieldErrors.invalid(`${path}.type`, s.type, detail) : fieldErrors.required(`${path}.type`, detail));
  } else if (!s.type && !intOrString && !preserve) {
    const detail = { root: 'must not be empty at the root', item: 'must not be empty for specified array items', field: 'must not be empty for specified object fields' }[level];
    out.push(fieldErrors.required(`${path}.type`, detail));
  }
  if (embedded && s.additionalProperties !== undefined) out.push(fieldErrors.forbidden(`${path}.additionalProperties`, 'must not be used if x-kubernetes-embedded-resource is set'));
  if (level === 'root' && s.type && s.type !== 'object') out.push(fieldErrors.invalid(`${path}.type`, s.type, 'must be object at the root'));
  const checkMetadata = level === 'root' || embedded;
  const props = s.properties ?? {};
  for (const [name, want] of [['kind', 'string'], ['apiVersion', 'string'], ['metadata', 'object']] as const) {
    const prop = props[name];
    if (prop && checkMetadata && prop.type !== want) out.push(fieldErrors.invalid(`${path}.properties[${name}].type`, prop.type ?? '', `must be ${want}`));
  }
  const metadata = props['metadata'];
  if (metadata && level === 'root' && !onlyNameAndGenerateName(metadata)) {
    out.push(fieldErrors.forbidden(`${path}.properties[metadata]`, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
  }
  if (embedded && !preserve && Object.keys(props).length === 0) {
    out.push(fieldErrors.required(`${path}.properties`, 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  }
}

function isIntOrStringAnyOf(anyOf: JSONSchemaProps[] | undefined): boolean {
  return anyOf?.length === 2 && Object.keys(anyOf[0] ?? {}).join() === 'type' && anyOf[0]?.type === 'integer' && Object.keys(anyOf[1] ?? {}).join() === 'type' && anyOf[1]?.type === 'string';
}

/** Root metadata may only restrict name and generateName (and say `type: object`). */
function onlyNameAndGenerateName(metadata: JSONSchemaProps): boolean {
  const allowed = new Set(['type', 'properties', 'default', 'description']);
  if (Object.keys(metadata).some((k) => !allowed.has(k))) return false;
  return Object.keys(metadata.properties ?? {}).every((k) => k === 'name' || k === 'generateName');
}

/** `validateValueValidation`. */
function valueValidation(v: JSONSchemaProps, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, path: string, out: StatusCause[]): void {
  if (!skipAnyOf) v.anyOf?.forEach((sub, i) => nested(sub, false, `${path}.anyOf[${i}]`, out));
  v.allOf?.forEach((sub, i) => nested(sub, skipFirstAllOfAnyOf && i === 0, `${path}.allOf[${i}]`, out));
  v.oneOf?.forEach((sub, i) => nested(sub, false, `${path}.oneOf[${i}]`, out));
  if (v.not) nested(v.not, false, `${path}.not`, out);
  if (v.pattern !== undefined) {
    try {
      new RegExp(v.pattern, 'u');
    } catch (err) {
      out.push(fieldErrors.invalid(`${path}.pattern`, v.pattern, `must be a valid regular expression, but isn't: ${err instanceof Error ? err.message : String(err)}`));
    }
  }
}

/** `validateNestedValueValidation`: inside logic junctors only value validations are allowed. */
function nested(v: JSONSchemaProps, skipAnyOf: boolean, path: string, out: StatusCause[]): void {
  valueValidation(v, skipAnyOf, false, path, out);
  if (v.items) nested(v.items, false, `${path}.items`, out);
  for (const [name, prop] of Object.entries(v.properties ?? {})) nested(prop, false, `${path}.properties[${name}]`, out);
  const forbidden: Array<[keyof JSONSchemaProps, boolean, string]> = [
    ['type', !!v.type, 'must be empty to be structural'],
    ['additionalProperties', v.additionalProperties !== undefined, 'must be undefined to be structural'],
    ['default', v.default !== undefined, 'must be undefined to be structural'],
    ['title', !!v.title, 'must be empty to be structural'],
    ['description', !!v.description, 'must be empty to be structural'],
    ['nullable', v.nullable === true, 'must be false to be structural'],
    ['x-kubernetes-preserve-unknown-fields', v['x-kubernetes-preserve-unknown-fields'] === true, 'must be false to be structural'],
    ['x-kubernetes-embedded-resource', v['x-kubernetes-embedded-resource'] === true, 'must be false to be structural'],
    ['x-kubernetes-int-or-string', v['x-kubernetes-int-or-string'] === true, 'must be false to be structural'],
    ['x-kubernetes-list-map-keys', (v['x-kubernetes-list-map-keys'] ?? []).length > 0, 'must be empty to be structural'],
    ['x-kubernetes-list-type', v['x-kubernetes-list-type'] !== undefined, 'must be undefined to be structural'],
  ];
  for (const [key, present, detail] of forbidden) if (present) out.push(fieldErrors.forbidden(`${path}.${key}`, detail));
  if (v.properties?.['metadata']) out.push(fieldErrors.forbidden(`${path}.properties[metadata]`, 'must not be specified in a nested context'));
}
