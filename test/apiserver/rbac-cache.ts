import type { RbacObjects } from './rbac/index.ts';
import type { Storage } from './storage.ts';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const caches = new WeakMap<Storage, { value: RbacObjects | undefined }>();

/** The stored RBAC objects, cached until one of them changes. */
export function rbacObjects(storage: Storage): RbacObjects {
  let cache = caches.get(storage);
  if (!cache) {
    const entry: { value: RbacObjects | undefined } = { value: undefined };
    storage.onChange((e) => {
      if (e.gr.startsWith(`${RBAC_GROUP}/`)) entry.value = undefined;
    });
    caches.set(storage, entry);
    cache = entry;
  }
  cache.value ??= {
    roles: storage.list(`${RBAC_GROUP}/roles`),
    clusterRoles: storage.list(`${RBAC_GROUP}/clusterroles`),
    roleBindings: storage.list(`${RBAC_GROUP}/rolebindings`),
    clusterRoleBindings: storage.list(`${RBAC_GROUP}/clusterrolebindings`),
  };
  return cache.value;
}
