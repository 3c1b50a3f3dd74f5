import type { KubeObject } from '../../../src/kube/object.ts';
import { ruleAllows } from './rules.ts';
import type { AuthorizationAttributes, PolicyRule, RbacObjects, RoleRef, Subject, UserInfo } from './types.ts';

/** The group whose members are allowed everything (kube's `system:masters` superuser bypass). */
const mastersGroup = 'system:masters';
const saPrefix = 'system:serviceaccount:';

/**
 * Kubernetes RBAC authorization (`RBACAuthorizer.Authorize`) over the stored objects:
 * ClusterRoleBindings grant cluster-wide, RoleBindings grant inside their own namespace (their
 * roleRef may name a Role of that namespace or a ClusterRole). `system:masters` is always allowed,
 * as kube-apiserver's privileged-group authorizer does. ClusterRole `aggregationRule`s are not
 * evaluated: only the `rules` stored on a ClusterRole count.
 */
export function authorize(rbac: RbacObjects, attrs: AuthorizationAttributes): { allowed: boolean; reason?: string } {
  if (attrs.user.groups.includes(mastersGroup)) return { allowed: true, reason: `user is in group "${mastersGroup}"` };
  for (const binding of rbac.clusterRoleBindings) {
    if (!appliesTo(subjectsOf(binding), attrs.user, '')) continue;
    const ref = roleRefOf(binding);
    if (ref.kind !== 'ClusterRole') continue;
    const role = findByName(rbac.clusterRoles, ref.name);
    if (role && rulesOf(role).some((rule) => ruleAllows(attrs, rule))) {
      return { allowed: true, reason: `RBAC: allowed by ClusterRoleBinding "${binding.metadata.name ?? ''}" of ClusterRole "${ref.name ?? ''}" to ${describe(attrs.user)}` };
    }
  }
  if (attrs.namespace) {
    for (const binding of rbac.roleBindings) {
      if (binding.metadata.namespace !== attrs.namespace) continue;
      if (!appliesTo(subjectsOf(binding), attrs.user, attrs.namespace)) continue;
      const ref = roleRefOf(binding);
      const role =
        ref.kind === 'ClusterRole'
          ? findByName(rbac.clusterRoles, ref.name)
          : ref.kind === 'Role'
            ? rbac.roles.find((r) => r.metadata.namespace === attrs.namespace && r.metadata.name === ref.name)
            : undefined;
      if (role && rulesOf(role).some((rule) => ruleAllows(attrs, rule))) {
        return {
          allowed: true,
          reason: `RBAC: allowed by RoleBinding "${binding.metadata.name ?? ''}/${attrs.namespace}" of ${ref.kind ?? ''} "${ref.name ?? ''}" to ${describe(attrs.user)}`,
        };
      }
    }
  }
  return { allowed: false };
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
