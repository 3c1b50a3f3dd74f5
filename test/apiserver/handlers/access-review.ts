import { statusErrors } from '../../../src/kube/api-status-error.ts';
import { fail } from '../errors.ts';
import { parseBody, readBody, sendJson } from '../http-io.ts';
import { authorize, type AuthorizationAttributes } from '../rbac/index.ts';
import type { ResourceRequest, ServerContext } from '../server-context.ts';
import { rbacObjects } from '../rbac-cache.ts';

interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}
interface ReviewSpec {
  resourceAttributes?: ResourceAttributes;
  nonResourceAttributes?: { path?: string; verb?: string };
  user?: string;
  groups?: string[];
}

/**
 * `SelfSubjectAccessReview`, `SubjectAccessReview` and `LocalSubjectAccessReview`
 * (authorization.k8s.io/v1, what `kubectl auth can-i` asks), answered by the RBAC authorizer; and
 * `SelfSubjectReview` (authentication.k8s.io/v1, `kubectl auth whoami`). Nothing is stored.
 */
export async function handleReview(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const raw = await readBody(r.req);
  const body = (raw.length ? parseBody(raw, r.req.headers['content-type']) : {}) as { spec?: ReviewSpec } | null;
  const kind = r.type.kind;
  const apiVersion = `${r.type.group}/${r.type.version}`;
  if (kind === 'SelfSubjectReview') {
    return sendJson(r.res, 201, { kind, apiVersion, metadata: { creationTimestamp: null }, status: { userInfo: { username: r.user.name, groups: [...r.user.groups] } } });
  }
  const spec = body?.spec ?? {};
  const self = kind === 'SelfSubjectAccessReview';
  const user = self ? { name: r.user.name, groups: [...r.user.groups] } : { name: spec.user ?? '', groups: spec.groups ?? [] };
  if (!self && !spec.user && !(spec.groups?.length)) {
    fail(statusErrors.invalid({ group: r.type.group, kind }, '', [{ reason: 'FieldValueInvalid', field: 'spec.user', message: `Invalid value: "": at least one of user or group must be specified` }]));
  }
  const ra = spec.resourceAttributes;
  const nra = spec.nonResourceAttributes;
  if (kind === 'LocalSubjectAccessReview' && ra) ra.namespace = r.namespace ?? '';
  const attrs: AuthorizationAttributes = ra
    ? {
        user, verb: ra.verb ?? '', apiGroup: ra.group ?? '', resource: ra.resource ?? '', path: '', isResourceRequest: true,
        ...(ra.subresource ? { subresource: ra.subresource } : {}), ...(ra.namespace ? { namespace: ra.namespace } : {}), ...(ra.name ? { name: ra.name } : {}),
      }
    : { user, verb: nra?.verb ?? '', apiGroup: '', resource: '', path: nra?.path ?? '', isResourceRequest: false };
  const decision = authorize(rbacObjects(ctx.storage), attrs);
  sendJson(r.res, 201, {
    kind,
    apiVersion,
    metadata: { creationTimestamp: null },
    spec,
    status: { allowed: decision.allowed, ...(decision.reason ? { reason: decision.reason } : {}) },
  });
}
