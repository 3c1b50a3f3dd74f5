import { statusErrors } from '../../../src/kube/api-status-error.ts';
import type { StatusBody } from '../../../src/kube/object.ts';
import type { AuthorizationAttributes } from './types.ts';

/**
 * The 403 body kube-apiserver sends for a denied request (`responsewriters.forbiddenMessage`), e.g.
 * `cronjobs.batch is forbidden: User "developer" cannot create resource "cronjobs" in API group
 * "batch" in the namespace "kubelings"`, or for a non-resource URL
 * `forbidden: User "developer" cannot get path "/foo"`.
 */
export function forbiddenStatus(attrs: AuthorizationAttributes): StatusBody {
  if (!attrs.isResourceRequest) {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `forbidden: User "${attrs.user.name}" cannot ${attrs.verb} path "${attrs.path}"`,
      reason: 'Forbidden',
      details: {},
      code: 403,
    };
  }
  return statusErrors.forbidden(
    attrs.user.name,
    attrs.verb,
    { group: attrs.apiGroup, resource: attrs.resource },
    attrs.namespace || undefined,
    attrs.name || undefined,
    attrs.subresource || undefined,
  );
}
