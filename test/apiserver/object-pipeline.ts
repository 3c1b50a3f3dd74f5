import { statusErrors } from '../../src/kube/api-status-error.ts';
import type { KubeObject, StatusCause } from '../../src/kube/object.ts';
import { applyBuiltinDefaults, pruneBuiltinUnknownFields, quantityDecodeError, validateBuiltin } from './builtins/index.ts';
import { fail } from './errors.ts';
import { apiVersionOf, type ResourceType } from './resource-type.ts';
import { ratchetCauses } from './schema/ratcheting.ts';
import { defaultCustomResource, pruneCustomResource, validateCustomResource, type JSONSchemaProps } from './schema/index.ts';

/** `fieldValidation` query parameter values. */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** Extra validation a kind adds (the CRD strategy validates its schema and names); `subresource` of an update, as requested. */
export type KindValidator = (obj: KubeObject, old: KubeObject | undefined, subresource?: string) => StatusCause[];

/**
 * Checks the body's `apiVersion`/`kind` against the endpoint and fills them in when absent, as the
 * apiserver's decoder does (`the API version in the data (x) does not match the expected API version (y)`).
 */
export function checkTypeMeta(type: ResourceType, obj: KubeObject): void {
  const expected = apiVersionOf(type);
  if (obj.apiVersion !== undefined && obj.apiVersion !== expected) {
    fail(statusErrors.badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${expected})`));
  }
  if (obj.kind !== undefined && obj.kind !== type.kind) {
    fail(statusErrors.badRequest(`the kind in the data (${obj.kind}) does not match the expected kind (${type.kind})`));
  }
  if (typeof obj.metadata !== 'object' || obj.metadata === null || Array.isArray(obj.metadata)) obj.metadata = {};
  obj.apiVersion = expected;
  obj.kind = type.kind;
}

/**
 * Decoding of a custom resource: unknown fields pruned (reported per `fieldValidation`: Strict → 400
 * `Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.bogus"`, Warn → a warning each), then schema defaults.
 * Returns the warnings to send.
 */
export function decodeCustomResource(type: ResourceType, obj: KubeObject, fieldValidation: FieldValidation): string[] {
  const schema = type.custom?.schema as JSONSchemaProps | undefined;
  if (!schema) return [];
  const warnings = unknownFieldWarnings(type, pruneCustomResource(schema, obj), fieldValidation);
  defaultCustomResource(schema, obj);
  return warnings;
}

function unknownFieldWarnings(type: ResourceType, removed: readonly string[], fieldValidation: FieldValidation): string[] {
  if (removed.length === 0) return [];
  const unknown = removed.map((p) => `unknown field "${p}"`);
  if (fieldValidation === 'Strict') {
    // The decode error as the handlers' transformDecodeError wraps it.
    fail(statusErrors.badRequest(`${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${unknown.join(', ')}`));
  }
  return fieldValidation === 'Warn' ? unknown : [];
}

/**
 * Built-in decoding: a container quantity that does not parse is a 400; fields the Go types do not
 * have are dropped (and reported per `fieldValidation`), then the kind's server-side defaults
 * (`SetDefaults_*`) are applied.
 */
export function decodeBuiltin(type: ResourceType, obj: KubeObject, fieldValidation: FieldValidation): string[] {
  // A quantity that does not parse fails the JSON unmarshalling itself, before the strict-field check.
  const quantityError = quantityDecodeError(type.group, type.resource, obj);
  if (quantityError) fail(statusErrors.badRequest(`${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: ${quantityError}`));
  const warnings = unknownFieldWarnings(type, pruneBuiltinUnknownFields(type.group, type.resource, obj), fieldValidation);
  applyBuiltinDefaults(type.group, type.resource, obj);
  return warnings;
}

/**
 * Validates the object about to be stored; throws 422 Invalid listing every cause. On an update of a
 * custom resource, schema errors at unchanged fields are ratcheted away unless `ratcheting` is false.
 */
export function validateObject(type: ResourceType, obj: KubeObject, old: KubeObject | undefined, extra: KindValidator | undefined, subresource?: string, ratcheting = true): void {
  const name = obj.metadata.name ?? '';
  let causes: StatusCause[];
  if (type.custom) {
    // ValidateObjectMetaAccessor with NameIsDNSSubdomain: the generic branch of the built-in validator.
    causes = validateBuiltin(type.group, type.resource, obj, old);
    const schema = type.custom.schema as JSONSchemaProps | undefined;
    if (schema) {
      const schemaCauses = validateCustomResource(schema, obj, old ? { oldObj: old } : undefined);
      causes.push(...(old && ratcheting ? ratchetCauses(schemaCauses, obj, old) : schemaCauses));
    }
  } else {
    causes = validateBuiltin(type.group, type.resource, obj, old);
  }
  if (extra) causes.push(...extra(obj, old, subresource));
  if (causes.length > 0) fail(statusErrors.invalid({ group: type.group, kind: type.kind }, name, causes));
}
