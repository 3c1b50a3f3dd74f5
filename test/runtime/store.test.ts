import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/kube/object.ts';
import { CONTROLLER_OWNER_UID_INDEX, controllerOwnerUidIndex, Store } from '../../src/runtime/store.ts';

function ownerIndexedStore(): Store<KubeObject> {
  const store = new Store<KubeObject>();
  store.addIndex(CONTROLLER_OWNER_UID_INDEX, controllerOwnerUidIndex);
  return store;
}

function child(name: string, namespace: string, ownerUid?: string, labels?: Record<string, string>): KubeObject {
  return {
    metadata: {
      name, namespace, resourceVersion: '1',
      ...(labels ? { labels } : {}),
      ...(ownerUid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: ownerUid, controller: true }] } : {}),
    },
  };
}

describe('Store', () => {
  it('gets objects by key and by namespace/name, lists all or one namespace', () => {
    const store = new Store<KubeObject>();
    store.upsert(child('a', 'ns1'));
    store.upsert(child('b', 'ns2'));
    store.upsert({ metadata: { name: 'cluster-wide' } });
    expect(store.get('ns1/a')?.metadata.name).toBe('a');
    expect(store.getByNamespaceName('ns2', 'b')?.metadata.name).toBe('b');
    expect(store.getByNamespaceName(undefined, 'cluster-wide')?.metadata.name).toBe('cluster-wide');
    expect(store.list().map((o) => o.metadata.name).sort()).toEqual(['a', 'b', 'cluster-wide']);
    expect(store.list('ns2').map((o) => o.metadata.name)).toEqual(['b']);
    expect(store.keys().sort()).toEqual(['cluster-wide', 'ns1/a', 'ns2/b']);
    expect(store.size).toBe(3);
  });

  it('indexes controllees by their controller owner UID and follows updates and deletes', () => {
    const store = ownerIndexedStore();
    store.upsert(child('a', 'ns', 'owner-1'));
    store.upsert(child('b', 'ns', 'owner-1'));
    store.upsert(child('c', 'ns'));
    expect(store.byIndex(CONTROLLER_OWNER_UID_INDEX, 'owner-1').map((o) => o.metadata.name).sort()).toEqual(['a', 'b']);
    store.upsert(child('b', 'ns', 'owner-2'));
    expect(store.byIndex(CONTROLLER_OWNER_UID_INDEX, 'owner-1').map((o) => o.metadata.name)).toEqual(['a']);
    expect(store.byIndex(CONTROLLER_OWNER_UID_INDEX, 'owner-2').map((o) => o.metadata.name)).toEqual(['b']);
    expect(store.delete('ns/a')?.metadata.name).toBe('a');
    expect(store.byIndex(CONTROLLER_OWNER_UID_INDEX, 'owner-1')).toEqual([]);
    expect(store.delete('ns/a')).toBeUndefined();
  });

  it('ignores owner references that are not the controller', () => {
    const store = ownerIndexedStore();
    store.upsert({ metadata: { name: 'x', namespace: 'ns', ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: 'u' }] } });
    expect(store.byIndex(CONTROLLER_OWNER_UID_INDEX, 'u')).toEqual([]);
  });

  it('builds a custom index over existing objects and supports several values per object', () => {
    const store = new Store<KubeObject>();
    store.upsert(child('a', 'ns', undefined, { team: 'x', tier: 'db' }));
    store.upsert(child('b', 'ns', undefined, { team: 'y', tier: 'db' }));
    store.addIndex('label', (o) => Object.entries(o.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`));
    expect(store.byIndex('label', 'tier=db').map((o) => o.metadata.name).sort()).toEqual(['a', 'b']);
    expect(store.byIndex('label', 'team=y').map((o) => o.metadata.name)).toEqual(['b']);
  });

  it.each([
    ['an unknown index', (s: Store<KubeObject>) => s.byIndex('nope', 'v'), /no index named "nope"/],
    ['a duplicate index', (s: Store<KubeObject>) => s.addIndex(CONTROLLER_OWNER_UID_INDEX, () => []), /already exists/],
  ])('rejects %s with a message naming it', (_name, call, message) => {
    expect(() => call(ownerIndexedStore())).toThrow(message);
  });
});
