import type { ResourceType } from './resource-type.ts';

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;

interface BuiltinSpec {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  readonly subresources?: readonly string[];
  readonly verbs?: readonly string[];
  readonly spec?: boolean;
  readonly createOnUpdate?: boolean;
  /** The strategy's `AllowUnconditionalUpdate`: false makes an update without resourceVersion a 422. @default true */
  readonly unconditionalUpdate?: boolean;
  readonly defaultPropagation?: 'Background' | 'Orphan';
  readonly zeroStatus?: Readonly<Record<string, unknown>>;
}

function builtin(spec: BuiltinSpec): ResourceType {
  return {
    group: spec.group,
    version: spec.version,
    resource: spec.resource,
    kind: spec.kind,
    listKind: `${spec.kind}List`,
    namespaced: spec.namespaced,
    singularName: spec.kind.toLowerCase(),
    shortNames: spec.shortNames ?? [],
    categories: spec.categories ?? [],
    subresources: spec.subresources ?? [],
    verbs: spec.verbs ?? ALL_VERBS,
    generation: spec.spec ? 'spec' : 'none',
    allowUnconditionalUpdate: spec.unconditionalUpdate ?? true,
    allowCreateOnUpdate: spec.createOnUpdate ?? false,
    ...(spec.defaultPropagation ? { defaultPropagation: spec.defaultPropagation } : {}),
    ...(spec.zeroStatus ? { zeroStatus: spec.zeroStatus } : {}),
  };
}

/**
 * The built-in kinds this server serves, with the discovery facts and strategy flags of
 * kube-apiserver 1.32 (`pkg/registry/<group>/<resource>/strategy.go`).
 */
export const BUILTIN_RESOURCES: readonly ResourceType[] = [
  builtin({ group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, shortNames: ['ns'], subresources: ['status', 'finalize'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] }),
  builtin({ group: '', version: 'v1', resource: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true, shortNames: ['sa'], subresources: ['token'] }),
  builtin({ group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] }),
  builtin({ group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true }),
  // Pods are stored and served, with their status subresource, but nothing schedules or runs them: a
  // test plays the Job controller (creates a Job's Pod) and the kubelet (writes its status).
  builtin({ group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true, shortNames: ['po'], categories: ['all'], subresources: ['status'], zeroStatus: { phase: 'Pending' } }),
  // Services are stored and served (the operator ships its webhook's); no kube-proxy routes them: a test
  // maps one to a loopback address with `services`/`registerService` (the conversion webhook client).
  builtin({ group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true, shortNames: ['svc'], categories: ['all'], subresources: ['status'], zeroStatus: { loadBalancer: {} }, verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] }),
  builtin({ group: '', version: 'v1', resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'], createOnUpdate: true }),
  builtin({ group: 'events.k8s.io', version: 'v1', resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'], createOnUpdate: true }),
  builtin({ group: 'batch', version: 'v1', resource: 'cronjobs', kind: 'CronJob', namespaced: true, shortNames: ['cj'], categories: ['all'], subresources: ['status'], spec: true }),
  // batch/v1 Jobs orphan their pods by default for backwards compatibility (pkg/registry/batch/job/strategy.go).
  builtin({ group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job', namespaced: true, categories: ['all'], subresources: ['status'], spec: true, defaultPropagation: 'Orphan' }),
  // Deployments are stored and served (the operator ships one) but no controller creates ReplicaSets or Pods.
  builtin({ group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true, shortNames: ['deploy'], categories: ['all'], subresources: ['status', 'scale'], spec: true }),
  // leaseStrategy.AllowUnconditionalUpdate is false: every update names the resourceVersion it replaces.
  builtin({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true, createOnUpdate: true, unconditionalUpdate: false }),
  builtin({ group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies', kind: 'NetworkPolicy', namespaced: true, shortNames: ['netpol'], spec: true }),
  builtin({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', kind: 'Role', namespaced: true, createOnUpdate: true }),
  builtin({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', kind: 'RoleBinding', namespaced: true, createOnUpdate: true }),
  builtin({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', kind: 'ClusterRole', namespaced: false, createOnUpdate: true }),
  builtin({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false, createOnUpdate: true }),
  // Reviews are computed, never stored (create only).
  builtin({ group: 'authorization.k8s.io', version: 'v1', resource: 'selfsubjectaccessreviews', kind: 'SelfSubjectAccessReview', namespaced: false, verbs: ['create'] }),
  builtin({ group: 'authorization.k8s.io', version: 'v1', resource: 'selfsubjectrulesreviews', kind: 'SelfSubjectRulesReview', namespaced: false, verbs: ['create'] }),
  builtin({ group: 'authorization.k8s.io', version: 'v1', resource: 'subjectaccessreviews', kind: 'SubjectAccessReview', namespaced: false, verbs: ['create'] }),
  builtin({ group: 'authorization.k8s.io', version: 'v1', resource: 'localsubjectaccessreviews', kind: 'LocalSubjectAccessReview', namespaced: true, verbs: ['create'] }),
  builtin({ group: 'authentication.k8s.io', version: 'v1', resource: 'selfsubjectreviews', kind: 'SelfSubjectReview', namespaced: false, verbs: ['create'] }),
  builtin({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false, shortNames: ['crd', 'crds'], categories: ['api-extensions'], subresources: ['status'], spec: true, unconditionalUpdate: false }),
];
