import type { KubeObject, OwnerReference, StatusBody } from '../../src/kube/object.ts';
import type { AuthenticatedUser } from './auth.ts';
import { fail } from './errors.ts';
import { rbacObjects } from './rbac-cache.ts';
import { authorize, type AuthorizationAttributes } from './rbac/index.ts';
import type { ResourceRegistry } from './resource-registry.ts';
import type { ResourceType } from './resource-type.ts';
import type { Storage } from './storage.ts';

/** Called by the store with the object about to be written and the stored one (undefined on create). */
export type Admission = (obj: KubeObject, old: KubeObject | undefined) => void;

function refKey(r: OwnerReference): string {
  return JSON.stringify([r.apiVersion, r.kind, r.name, r.uid, r.controller ?? null, r.blockOwnerDeletion ?? null]);
}

function forbidden(type: ResourceType, name: string, why: string): StatusBody {
  const qualified = type.group ? `${type.resource}.${type.group}` : type.resource;
  return {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: `${qualified} "${name}" is forbidden: ${why}`,
    reason: 'Forbidden',
    details: { name, ...(type.group ? { group: type.group } : {}), kind: type.resource },
    code: 403,
  };
}

/**
 * The OwnerReferencesPermissionEnforcement admission plugin (plugin/pkg/admission/gc), off by
 * default in kube-apiserver as here: changing ownerReferences of an existing object needs `delete`
 * on it, and every newly blocking reference (`blockOwnerDeletion: true`) needs `update` on the
 * owner's `finalizers` subresource.
 */
export function ownerReferenceAdmission(registry: ResourceRegistry, storage: Storage, type: ResourceType, namespace: string | undefined, user: AuthenticatedUser): Admission {
  const info = { name: user.name, groups: [...user.groups] };
  const allowed = (attrs: Omit<AuthorizationAttributes, 'user' | 'path' | 'isResourceRequest'>): boolean =>
    authorize(rbacObjects(storage), { ...attrs, user: info, path: '', isResourceRequest: true }).allowed;
  return (obj, old) => {
    const refs = obj.metadata.ownerReferences ?? [];
    const oldRefs = old?.metadata.ownerReferences ?? [];
    const oldKeys = new Set(oldRefs.map(refKey));
    const changed = refs.length !== oldRefs.length || refs.some((r) => !oldKeys.has(refKey(r)));
    if (!changed) return;
    const name = obj.metadata.name ?? '';
    if (old && !allowed({ verb: 'delete', apiGroup: type.group, resource: type.resource, ...(namespace ? { namespace } : {}), name })) {
      fail(forbidden(type, name, "cannot set an ownerRef on a resource you can't delete: , <nil>"));
    }
    const wasBlocking = new Set(oldRefs.filter((r) => r.blockOwnerDeletion === true).map((r) => r.uid));
    for (const ref of refs) {
      if (ref.blockOwnerDeletion !== true || wasBlocking.has(ref.uid)) continue;
      const slash = ref.apiVersion.lastIndexOf('/');
      const group = slash < 0 ? '' : ref.apiVersion.slice(0, slash);
      const version = ref.apiVersion.slice(slash + 1);
      const ownerType = registry.all().find((t) => t.group === group && t.version === version && t.kind === ref.kind);
      if (!ownerType) {
        fail(forbidden(type, name, `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${ref.apiVersion} Kind ${ref.kind}: no matches for kind "${ref.kind}" in version "${ref.apiVersion}"`));
      }
      const ok = allowed({ verb: 'update', apiGroup: ownerType.group, resource: ownerType.resource, subresource: 'finalizers', ...(ownerType.namespaced && namespace ? { namespace } : {}), name: ref.name });
      if (!ok) fail(forbidden(type, name, "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>"));
    }
  };
}
