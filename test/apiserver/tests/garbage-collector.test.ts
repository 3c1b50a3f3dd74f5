/**
 * The garbage collector is incremental: a pass looks at the objects a change concerns, through its
 * index of dependents by owner uid, never at every stored object (which made each write with
 * ownerReferences cost a walk over the whole store). Behaviour through the API: crd-and-gc.test.ts
 * and test/conformance/gc.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../../../src/kube/object.ts';
import { FakeClock } from '../../../src/runtime/clock.ts';
import { GarbageCollector } from '../garbage-collector.ts';
import { installNamespaceStrategy } from '../namespace-strategy.ts';
import { RegistryStore } from '../registry-store.ts';
import { ResourceRegistry } from '../resource-registry.ts';
import { seedCluster } from '../seed.ts';
import { Storage } from '../storage.ts';

function setUp() {
  const clock = new FakeClock();
  const registry = new ResourceRegistry();
  const storage = new Storage(10_000);
  const store = new RegistryStore(storage, clock, true);
  installNamespaceStrategy(store);
  const gc = new GarbageCollector(storage, store, registry, { clock });
  seedCluster(registry, store);
  const configMaps = registry.get('', 'v1', 'configmaps');
  if (!configMaps) throw new Error('configmaps not served');
  const create = (name: string, owner?: KubeObject): KubeObject => {
    const ownerReferences = owner ? [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata.name ?? '', uid: owner.metadata.uid ?? '', controller: true }] : undefined;
    return store.create(configMaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(ownerReferences ? { ownerReferences } : {}) }, data: { v: '1' } }).object;
  };
  const names = (): string[] => storage.list('/configmaps', 'default').map((o) => o.metadata.name ?? '');
  return { clock, storage, store, configMaps, gc, create, names };
}

describe('garbage collector', () => {
  it('looks only at what a change concerns: a dependent written again lists no objects', () => {
    const { clock, storage, store, configMaps, create, names } = setUp();
    const owner = create('owner');
    for (let i = 0; i < 500; i++) create(`dep-${i}`, owner);
    clock.step(100);
    const list = vi.spyOn(storage, 'list');
    const dep = storage.get('/configmaps', 'default', 'dep-7') as KubeObject;
    store.update(configMaps, 'default', 'dep-7', { ...dep, data: { v: '2' } });
    clock.step(100);
    expect(list).not.toHaveBeenCalled();
    expect(names()).toHaveLength(501);
  });

  it('still deletes every dependent once its owner is gone, and a dependent created for a missing owner', () => {
    const { clock, store, configMaps, create, names } = setUp();
    const owner = create('owner');
    for (let i = 0; i < 50; i++) create(`dep-${i}`, owner);
    create('keep');
    clock.step(100);
    store.delete(configMaps, 'default', 'owner', { propagationPolicy: 'Background' });
    clock.step(100);
    expect(names()).toEqual(['keep']);
    create('late', owner);
    clock.step(100);
    expect(names()).toEqual(['keep']);
  });
});
