import type { StatusCause } from '../../../src/kube/object.ts';
import { fieldErrors } from '../schema/causes.ts';
import { type NameValidator, nameIsDNSLabel, nameIsDNSSubdomain, nameIsPathSegment } from './name-rules.ts';

/** Resources whose names are path segments (RBAC: `ValidateRBACName`). */
const pathSegmentResources = new Set(['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings']);
/** Resources whose names are DNS-1123 labels. */
const labelResources = new Set(['namespaces']);

/** The name rule kube applies to a resource: label for namespaces, path segment for RBAC, else DNS subdomain. */
export function nameValidatorFor(resource: string): NameValidator {
  if (labelResources.has(resource)) return nameIsDNSLabel;
  if (pathSegmentResources.has(resource)) return nameIsPathSegment;
  return nameIsDNSSubdomain;
}

/**
 * `metadata.name` checks for any resource (custom resources use the DNS-1123 subdomain rule), with
 * kube's `field.Invalid` causes; an empty name is `Required value: name or generateName is required`.
 */
export function validateObjectName(resource: string, name: string): StatusCause[] {
  if (name === '') return [fieldErrors.required('metadata.name', 'name or generateName is required')];
  return nameValidatorFor(resource)(name, false).map((msg) => fieldErrors.invalid('metadata.name', name, msg));
}
