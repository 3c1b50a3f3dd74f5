import type { KubeObject } from '../../../src/kube/object.ts';
import { ruleAllows } from './rules.ts';
import type { AuthorizationAttributes, PolicyRule, RbacObjects, RoleRef, Subject, UserInfo } from './types.ts';

/** The group whose members are allowed everything (kube's `system:masters` superuser bypass). */
const mastersGroup = 'system:masters';
const saPrefix = 'system:serviceaccount:';

/** Where a rule came from, for the reason of an allow. */
interface RuleSource {
  readonly binding: KubeObject;
  readonly ref: RoleRef;
  /** The RoleBinding's namespace; undefined for a ClusterRoleBinding. */
  readonly namespace?: string;
}

/**
 * kube's `DefaultRuleResolver.VisitRulesFor`: every rule that applies to `user` in `namespace`, from
 * ClusterRoleBindings first, then the RoleBindings of `namespace` (their roleRef may name a Role of that
 * namespace or a ClusterRole). `visit` returns false to stop; a missing role is reported as an error.
 */
function visitRulesFor(rbac: RbacObjects, user: UserInfo, namespace: string | undefined, visit: (rule: PolicyRule, source: RuleSource) => boolean, onError: (message: string) => void = () => {}): void {
  for (const binding of rbac.clusterRoleBindings) {
    if (!appliesTo(subjectsOf(binding), user, '')) continue;
    const ref = roleRefOf(binding);
    if (ref.kind !== 'ClusterRole') continue;
    const role = findByName(rbac.clusterRoles, ref.name);
    if (!role) onError(`clusterrole.rbac.authorization.k8s.io "${ref.name ?? ''}" not found`);
    for (const rule of role ? rulesOf(role) : []) if (!visit(rule, { binding, ref })) return;
  }
  if (!namespace) return;
  for (const binding of rbac.roleBindings) {
    if (binding.metadata.namespace !== namespace) continue;
    if (!appliesTo(subjectsOf(binding), user, namespace)) continue;
    const ref = roleRefOf(binding);
    const role =
      ref.kind === 'ClusterRole'
        ? findByName(rbac.clusterRoles, ref.name)
        : ref.kind === 'Role'
          ? rbac.roles.find((r) => r.metadata.namespace === namespace && r.metadata.name === ref.name)
          : undefined;
    if (!role) onError(`${(ref.kind ?? '').toLowerCase()}.rbac.authorization.k8s.io "${ref.name ?? ''}" not found`);
    for (const rule of role ? rulesOf(role) : []) if (!visit(rule, { binding, ref, namespace })) return;
  }
}

/**
 * Kubernetes RBAC authorization (`RBACAuthorizer.Authorize`) over the stored objects:
 * ClusterRoleBindings grant cluster-wide, RoleBindings grant inside their own namespace (their
 * roleRef may name a Role of that namespace or a ClusterRole). `system:masters` is always allowed,
 * as kube-apiserver's privileged-group authorizer does. ClusterRole `aggregationRule`s are not
 * evaluated: only the `rules` stored on a ClusterRole count.
 */
export function authorize(rbac: RbacObjects, attrs: AuthorizationAttributes): { allowed: boolean; reason?: string } {
  if (attrs.user.groups.includes(mastersGroup)) return { allowed: true, reason: `user is in group "${mastersGroup}"` };
  let reason: string | undefined;
  visitRulesFor(rbac, attrs.user, attrs.namespace, (rule, { binding, ref, namespace }) => {
    if (!ruleAllows(attrs, rule)) return true;
    const by = namespace === undefined ? `ClusterRoleBinding "${binding.metadata.name ?? ''}"` : `RoleBinding "${binding.metadata.name ?? ''}/${namespace}"`;
    reason = `RBAC: allowed by ${by} of ${ref.kind ?? ''} "${ref.name ?? ''}" to ${describe(attrs.user)}`;
    return false;
  });
  return reason === undefined ? { allowed: false } : { allowed: true, reason };
}

/** The rules of `user` in `namespace` (kube `RBACAuthorizer.RulesFor`), for a SelfSubjectRulesReview. */
export function rulesFor(rbac: RbacObjects, user: UserInfo, namespace: string): { rules: PolicyRule[]; evaluationError?: string } {
  const rules: PolicyRule[] = [];
  const errors: string[] = [];
  visitRulesFor(rbac, user, namespace, (rule) => rules.push(rule) > 0, (e) => errors.push(e));
  // utilerrors.NewAggregate: one error prints as itself, several as [a, b].
  const evaluationError = errors.length === 0 ? undefined : errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
  return { rules, ...(evaluationError !== undefined ? { evaluationError } : {}) };
}

function describe(user: UserInfo): string {
  if (user.name.startsWith(saPrefix)) {
    const [namespace, name] = user.name.slice(saPrefix.length).split(':');
    return `ServiceAccount "${name ?? ''}/${namespace ?? ''}"`;
  }
  return `User "${user.name}"`;
}

/** `appliesToUser`: User by name, Group by membership, ServiceAccount by its derived user name. */
function appliesTo(subjects: Subject[], user: UserInfo, bindingNamespace: string): boolean {
  return subjects.some((subject) => {
    switch (subject.kind) {
      case 'User':
        return subject.name === user.name;
      case 'Group':
        return subject.name !== undefined && user.groups.includes(subject.name);
      case 'ServiceAccount': {
        // An empty subject namespace means the binding's own namespace (rbac ServiceAccount subjects).
        const namespace = subject.namespace || bindingNamespace;
        return namespace !== '' && user.name === `${saPrefix}${namespace}:${subject.name ?? ''}`;
      }
      default:
        return false;
    }
  });
}

function findByName(objects: KubeObject[], name: string | undefined): KubeObject | undefined {
  return name === undefined ? undefined : objects.find((o) => o.metadata.name === name);
}

function subjectsOf(binding: KubeObject): Subject[] {
  return Array.isArray(binding['subjects']) ? (binding['subjects'] as Subject[]) : [];
}

function roleRefOf(binding: KubeObject): RoleRef {
  const ref = binding['roleRef'];
  return typeof ref === 'object' && ref !== null ? (ref as RoleRef) : {};
}

function rulesOf(role: KubeObject): PolicyRule[] {
  return Array.isArray(role['rules']) ? (role['rules'] as PolicyRule[]) : [];
}
