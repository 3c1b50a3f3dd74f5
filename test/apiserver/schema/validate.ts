import type { StatusCause } from '../../../src/kube/object.ts';
import { validateCel } from './cel.ts';
import type { JSONSchemaProps } from './types.ts';
import { type Sink, validateValue } from './validate-value.ts';

/** Options of {@link validateCustomResource}. */
export interface ValidateCustomResourceOptions {
  /** The stored object on update: enables CEL transition rules (`oldSelf`). @default undefined (create) */
  readonly oldObj?: unknown;
}

/**
 * Validates a (defaulted, pruned) custom resource against its CRD's `openAPIV3Schema`: first the
 * OpenAPI value validations, then the CEL `x-kubernetes-validations` — unless a "blocking" error
 * (wrong type, required, enum, too long, too many) was found, in which case kube skips CEL and says so.
 */
export function validateCustomResource(schema: JSONSchemaProps, obj: unknown, options?: ValidateCustomResourceOptions): StatusCause[] {
  const sink: Sink = { causes: [], blocking: false };
  validateValue(schema, obj, '', sink);
  const causes = sink.causes;
  if (!hasRules(schema)) return causes;
  if (sink.blocking) {
    causes.push({
      reason: 'FieldValueInvalid',
      message: 'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      field: '<nil>',
    });
    return causes;
  }
  validateCel(schema, obj, options?.oldObj, '', causes);
  return causes;
}

function hasRules(schema: JSONSchemaProps | undefined): boolean {
  if (!schema) return false;
  if (schema['x-kubernetes-validations']?.length) return true;
  if (Object.values(schema.properties ?? {}).some(hasRules)) return true;
  return hasRules(schema.items) || (typeof schema.additionalProperties === 'object' && hasRules(schema.additionalProperties));
}
