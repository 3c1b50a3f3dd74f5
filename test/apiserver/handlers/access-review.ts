import { statusErrors } from '../../../src/kube/api-status-error.ts';
import { fail } from '../errors.ts';
import { parseBody, readBody, sendJson } from '../http-io.ts';
import { authorize, rulesFor, type AuthorizationAttributes, type PolicyRule } from '../rbac/index.ts';
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
  /** SelfSubjectRulesReview: the namespace whose rules are asked for. */
  namespace?: string;
  resourceAttributes?: ResourceAttributes;
  nonResourceAttributes?: { path?: string; verb?: string };
  user?: string;
  groups?: string[];
}

/**
 * `SelfSubjectAccessReview`, `SubjectAccessReview` and `LocalSubjectAccessReview`
 * (authorization.k8s.io/v1, what `kubectl auth can-i` asks), answered by the RBAC authorizer;
 * `SelfSubjectRulesReview` (`kubectl auth can-i --list`); and `SelfSubjectReview`
 * (authentication.k8s.io/v1, `kubectl auth whoami`). Nothing is stored.
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
  if (kind === 'SelfSubjectRulesReview') return sendJson(r.res, 201, selfSubjectRulesReview(ctx, r, spec));
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

/**
 * `selfsubjectrulesreview.REST.Create`: the requester's RBAC rules in `spec.namespace`, split into
 * resource and non-resource rules as `RBACAuthorizer.RulesFor` does (a rule with both lands in both);
 * the answer's spec is empty, as kube's is.
 */
function selfSubjectRulesReview(ctx: ServerContext, r: ResourceRequest, spec: ReviewSpec): Record<string, unknown> {
  if (!spec.namespace) fail(statusErrors.badRequest('no namespace on request'));
  const { rules, evaluationError } = rulesFor(rbacObjects(ctx.storage), { name: r.user.name, groups: [...r.user.groups] }, spec.namespace);
  const listed = (rule: PolicyRule, keys: readonly (keyof PolicyRule)[]): Record<string, unknown> => {
    const out: Record<string, unknown> = { verbs: rule.verbs ?? [] };
    for (const k of keys) if (rule[k]?.length) out[k] = rule[k];
    return out;
  };
  return {
    kind: 'SelfSubjectRulesReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: {},
    status: {
      resourceRules: rules.filter((x) => x.resources?.length).map((x) => listed(x, ['apiGroups', 'resources', 'resourceNames'])),
      nonResourceRules: rules.filter((x) => x.nonResourceURLs?.length).map((x) => listed(x, ['nonResourceURLs'])),
      incomplete: false,
      ...(evaluationError !== undefined ? { evaluationError } : {}),
    },
  };
}
