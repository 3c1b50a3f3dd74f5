import type { KubeObject } from '../../src/kube/object.ts';
import type { RegistryStore } from './registry-store.ts';

interface NamespaceShape {
  spec?: { finalizers?: string[] };
  status?: { phase?: string };
}

/**
 * The Namespace strategy (pkg/registry/core/namespace): `spec.finalizers: [kubernetes]` and phase
 * Active on create, the `kubernetes.io/metadata.name` label, phase Terminating on delete; the object
 * stays until the namespace controller has emptied it and removed the `kubernetes` finalizer.
 */
export function installNamespaceStrategy(store: RegistryStore): void {
  store.setHooks('', 'namespaces', {
    prepareCreate: (obj) => {
      const ns = obj as KubeObject & NamespaceShape;
      ns.spec = { ...ns.spec, finalizers: ['kubernetes'] };
      ns.status = { phase: 'Active' };
      obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name ?? '' };
    },
    // Only the finalize subresource changes spec.finalizers (namespaceStrategy.PrepareForUpdate).
    prepareUpdate: (obj, old, subresource) => {
      if (subresource === 'finalize') return;
      const ns = obj as KubeObject & NamespaceShape;
      const finalizers = (old as KubeObject & NamespaceShape).spec?.finalizers;
      ns.spec = { ...ns.spec };
      if (finalizers) ns.spec.finalizers = finalizers;
      else delete ns.spec.finalizers;
    },
    prepareDelete: (obj) => {
      (obj as KubeObject & NamespaceShape).status = { phase: 'Terminating' };
    },
    blocksRemoval: (obj) => ((obj as KubeObject & NamespaceShape).spec?.finalizers ?? []).length > 0,
  });
}
