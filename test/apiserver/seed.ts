import type { KubeObject } from '../../src/kube/object.ts';
import type { RegistryStore } from './registry-store.ts';
import type { ResourceRegistry } from './resource-registry.ts';
import type { ResourceType } from './resource-type.ts';

function must(registry: ResourceRegistry, group: string, resource: string): ResourceType {
  const t = registry.get(group, 'v1', resource);
  if (!t) throw new Error(`seed: resource ${group}/${resource} is not registered`);
  return t;
}

const RBAC = 'rbac.authorization.k8s.io';
const bootstrap = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const autoupdate = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };

function clusterRole(name: string, rules: unknown[]): KubeObject {
  return { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata: { name, labels: bootstrap, annotations: autoupdate }, rules };
}
function clusterRoleBinding(name: string, role: string, groups: string[]): KubeObject {
  return {
    apiVersion: `${RBAC}/v1`, kind: 'ClusterRoleBinding', metadata: { name, labels: bootstrap, annotations: autoupdate },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: role },
    subjects: groups.map((g) => ({ apiGroup: RBAC, kind: 'Group', name: g })),
  };
}

/**
 * What a fresh cluster has: namespaces default, kube-system, kube-public, kube-node-lease, and the
 * bootstrap RBAC policy that lets every authenticated user read discovery, OpenAPI, version and
 * health (`system:discovery`, `system:basic-user`, `system:public-info-viewer`) plus `cluster-admin`
 * for `system:masters` (plugin/pkg/auth/authorizer/rbac/bootstrappolicy).
 */
export function seedCluster(registry: ResourceRegistry, store: RegistryStore): void {
  const ns = must(registry, '', 'namespaces');
  for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
    store.create(ns, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
  const cr = must(registry, RBAC, 'clusterroles');
  const crb = must(registry, RBAC, 'clusterrolebindings');
  const roles = [
    clusterRole('cluster-admin', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }, { nonResourceURLs: ['*'], verbs: ['*'] }]),
    clusterRole('system:discovery', [{ nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'], verbs: ['get'] }]),
    clusterRole('system:basic-user', [
      { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
      { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
    ]),
    clusterRole('system:public-info-viewer', [{ nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] }]),
  ];
  for (const r of roles) store.create(cr, undefined, r);
  store.create(crb, undefined, clusterRoleBinding('cluster-admin', 'cluster-admin', ['system:masters']));
  store.create(crb, undefined, clusterRoleBinding('system:discovery', 'system:discovery', ['system:authenticated']));
  store.create(crb, undefined, clusterRoleBinding('system:basic-user', 'system:basic-user', ['system:authenticated']));
  store.create(crb, undefined, clusterRoleBinding('system:public-info-viewer', 'system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']));
}
