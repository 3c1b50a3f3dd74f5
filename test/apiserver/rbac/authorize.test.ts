import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/object.ts';
import { authorize } from './authorize.ts';
import type { AuthorizationAttributes, PolicyRule, RbacObjects, Subject, UserInfo } from './types.ts';

const developer: UserInfo = { name: 'developer', groups: ['system:authenticated'] };
const saUser: UserInfo = { name: 'system:serviceaccount:kubelings:operator', groups: ['system:serviceaccounts', 'system:serviceaccounts:kubelings', 'system:authenticated'] };

const request = (over: Partial<AuthorizationAttributes>): AuthorizationAttributes => ({
  user: developer,
  verb: 'get',
  apiGroup: 'coordination.k8s.io',
  resource: 'leases',
  namespace: 'kubelings',
  path: '/apis/coordination.k8s.io/v1/namespaces/kubelings/leases',
  isResourceRequest: true,
  ...over,
});

const role = (namespace: string | undefined, name: string, rules: PolicyRule[]): KubeObject => ({ metadata: { name, ...(namespace ? { namespace } : {}) }, rules });
const binding = (namespace: string | undefined, roleRef: { kind: string; name: string }, subjects: Subject[]): KubeObject => ({
  metadata: { name: `bind-${roleRef.name}`, ...(namespace ? { namespace } : {}) },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef },
  subjects,
});

/** The Role behind error-403-resourcename-*.json and rbac-resourcename-allowed-get.json. */
const leaseRole: RbacObjects = {
  roles: [role('kubelings', 'lease-holder', [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['op-leader'], verbs: ['get', 'update', 'list', 'create'] }])],
  clusterRoles: [],
  roleBindings: [binding('kubelings', { kind: 'Role', name: 'lease-holder' }, [{ kind: 'User', name: 'developer' }])],
  clusterRoleBindings: [],
};

describe('authorize with resourceNames (the recorded lease scenario)', () => {
  it.each<[string, Partial<AuthorizationAttributes>, boolean]>([
    ['get of the named lease', { verb: 'get', name: 'op-leader' }, true],
    ['update of the named lease', { verb: 'update', name: 'op-leader' }, true],
    ['get of another lease', { verb: 'get', name: 'other' }, false],
    ['list, even though the rule lists the verb', { verb: 'list' }, false],
    ['create, even though the rule lists the verb', { verb: 'create' }, false],
    ['get of the named lease in another namespace', { verb: 'get', name: 'op-leader', namespace: 'other' }, false],
  ])('%s → allowed=%s', (_name, over, allowed) => {
    expect(authorize(leaseRole, request(over)).allowed).toBe(allowed);
  });
});

describe('authorize', () => {
  it('always allows system:masters', () => {
    const empty: RbacObjects = { roles: [], clusterRoles: [], roleBindings: [], clusterRoleBindings: [] };
    expect(authorize(empty, request({ user: { name: 'admin', groups: ['system:masters'] }, verb: 'delete' })).allowed).toBe(true);
    expect(authorize(empty, request({})).allowed).toBe(false);
  });

  const clusterRules: PolicyRule[] = [
    { apiGroups: ['batch'], resources: ['cronjobs'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['kubelings.dev'], resources: ['backupschedules/status'], verbs: ['update', 'patch'] },
    { apiGroups: ['*'], resources: ['*/scale'], verbs: ['get'] },
    { apiGroups: [''], resources: ['*'], verbs: ['*'], resourceNames: [] },
    { nonResourceURLs: ['/healthz', '/debug/*'], verbs: ['get'] },
  ];
  const viaClusterRoleBinding: RbacObjects = {
    roles: [],
    clusterRoles: [role(undefined, 'viewer', clusterRules)],
    roleBindings: [],
    clusterRoleBindings: [binding(undefined, { kind: 'ClusterRole', name: 'viewer' }, [{ kind: 'Group', name: 'system:authenticated' }])],
  };

  it.each<[string, Partial<AuthorizationAttributes>, boolean]>([
    ['list cronjobs in any namespace', { apiGroup: 'batch', resource: 'cronjobs', verb: 'list', namespace: 'x' }, true],
    ['list cronjobs across all namespaces', { apiGroup: 'batch', resource: 'cronjobs', verb: 'list', namespace: undefined }, true],
    ['create cronjobs', { apiGroup: 'batch', resource: 'cronjobs', verb: 'create' }, false],
    ['cronjobs/status via the cronjobs rule', { apiGroup: 'batch', resource: 'cronjobs', subresource: 'status', verb: 'get' }, false],
    ['patch of a status subresource', { apiGroup: 'kubelings.dev', resource: 'backupschedules', subresource: 'status', verb: 'patch' }, true],
    ['patch of the main resource when only status is granted', { apiGroup: 'kubelings.dev', resource: 'backupschedules', verb: 'patch' }, false],
    ['*/scale in any group', { apiGroup: 'apps', resource: 'deployments', subresource: 'scale', verb: 'get' }, true],
    ['* verbs on core resources with empty resourceNames', { apiGroup: '', resource: 'configmaps', verb: 'deletecollection' }, true],
    ['a core rule does not leak into other groups', { apiGroup: 'apps', resource: 'deployments', verb: 'get' }, false],
    ['an exact non-resource URL', { isResourceRequest: false, path: '/healthz', verb: 'get' }, true],
    ['a non-resource URL under a * prefix', { isResourceRequest: false, path: '/debug/requests', verb: 'get' }, true],
    ['a non-resource URL with the wrong verb', { isResourceRequest: false, path: '/healthz', verb: 'post' }, false],
    ['a non-resource URL not listed', { isResourceRequest: false, path: '/metrics', verb: 'get' }, false],
  ])('via a ClusterRoleBinding to a group: %s → %s', (_name, over, allowed) => {
    expect(authorize(viaClusterRoleBinding, request(over)).allowed).toBe(allowed);
  });

  it('grants a ClusterRole through a RoleBinding only inside the binding namespace', () => {
    const rbac: RbacObjects = {
      roles: [],
      clusterRoles: [role(undefined, 'edit', [{ apiGroups: ['batch'], resources: ['cronjobs'], verbs: ['*'] }])],
      roleBindings: [binding('kubelings', { kind: 'ClusterRole', name: 'edit' }, [{ kind: 'ServiceAccount', name: 'operator', namespace: 'kubelings' }])],
      clusterRoleBindings: [],
    };
    const attrs = { user: saUser, apiGroup: 'batch', resource: 'cronjobs', verb: 'create' };
    expect(authorize(rbac, request(attrs))).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "bind-edit/kubelings" of ClusterRole "edit" to ServiceAccount "operator/kubelings"',
    });
    expect(authorize(rbac, request({ ...attrs, namespace: 'other' })).allowed).toBe(false);
    expect(authorize(rbac, request({ ...attrs, namespace: undefined })).allowed).toBe(false);
  });

  it.each<[string, Subject, UserInfo, boolean]>([
    ['a ServiceAccount subject without namespace uses the binding namespace', { kind: 'ServiceAccount', name: 'operator' }, saUser, true],
    ['a ServiceAccount of another namespace does not match', { kind: 'ServiceAccount', name: 'operator', namespace: 'other' }, saUser, false],
    ['a Group subject matches a service account group', { kind: 'Group', name: 'system:serviceaccounts:kubelings' }, saUser, true],
    ['a User subject matches by exact name', { kind: 'User', name: 'Developer' }, developer, false],
    ['an unknown subject kind never matches', { kind: 'Robot', name: 'developer' }, developer, false],
  ])('%s', (_name, subject, user, allowed) => {
    const rbac: RbacObjects = {
      roles: [role('kubelings', 'r', [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] }])],
      clusterRoles: [],
      roleBindings: [binding('kubelings', { kind: 'Role', name: 'r' }, [subject])],
      clusterRoleBindings: [],
    };
    expect(authorize(rbac, request({ user, name: 'x' })).allowed).toBe(allowed);
  });

  it('ignores a RoleBinding that points at a Role of another namespace or a missing role', () => {
    const rbac: RbacObjects = {
      roles: [role('other', 'r', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }])],
      clusterRoles: [],
      roleBindings: [binding('kubelings', { kind: 'Role', name: 'r' }, [{ kind: 'User', name: 'developer' }]), binding('kubelings', { kind: 'ClusterRole', name: 'missing' }, [{ kind: 'User', name: 'developer' }])],
      clusterRoleBindings: [binding(undefined, { kind: 'Role', name: 'r' }, [{ kind: 'User', name: 'developer' }])],
    };
    expect(authorize(rbac, request({})).allowed).toBe(false);
  });
});
