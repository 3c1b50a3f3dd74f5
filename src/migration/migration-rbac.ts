/**
 * The RBAC a storage-version migration needs, derived from the calls it makes: LIST, GET (the newest
 * copy after a 409) and PUT of the custom resource; GET of its one CRD and PUT of that CRD's `status`
 * (storedVersions). Discovery (`/apis/<group>/<version>`, for storageVersionHash) is granted to every
 * authenticated user by Kubernetes' `system:discovery`.
 */

/** A `rbac.authorization.k8s.io/v1` PolicyRule (fresh arrays on every call: a caller may edit them). */
export interface MigrationPolicyRule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

/** The resource a migration rewrites: its CRD name, group and plural. */
export interface MigratedResource {
  readonly crdName: string;
  readonly group: string;
  readonly plural: string;
}

/** The rules of a ClusterRole that lets `migrate-storage` migrate `resource` and nothing else. */
export function storageMigrationRules(resource: MigratedResource): MigrationPolicyRule[] {
  return [
    { apiGroups: [resource.group], resources: [resource.plural], verbs: ['get', 'list', 'update'] },
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: [resource.crdName], verbs: ['get'] },
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions/status'], resourceNames: [resource.crdName], verbs: ['update'] },
  ];
}
