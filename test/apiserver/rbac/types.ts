import type { KubeObject } from '../../../src/kube/object.ts';

/** The authenticated user of a request (`user.Info`). */
export interface UserInfo {
  /** User name; service accounts are `system:serviceaccount:<namespace>:<name>`. */
  name: string;
  /** Groups, e.g. `system:masters`, `system:authenticated`, `system:serviceaccounts:<ns>`. */
  groups: string[];
}

/** What the authorizer decides on (`authorizer.Attributes`). */
export interface AuthorizationAttributes {
  user: UserInfo;
  /** Kubernetes verb (get, list, watch, create, update, patch, delete, deletecollection) or HTTP verb for non-resource URLs. */
  verb: string;
  apiGroup: string;
  /** Plural resource name, e.g. `cronjobs`. */
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** The request path, used for non-resource requests. */
  path: string;
  isResourceRequest: boolean;
}

/** The stored RBAC objects the authorizer reads. */
export interface RbacObjects {
  roles: KubeObject[];
  clusterRoles: KubeObject[];
  roleBindings: KubeObject[];
  clusterRoleBindings: KubeObject[];
}

/** `rbacv1.PolicyRule`. */
export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** `rbacv1.Subject`. */
export interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
  apiGroup?: string;
}

/** `rbacv1.RoleRef`. */
export interface RoleRef {
  kind?: string;
  name?: string;
  apiGroup?: string;
}
