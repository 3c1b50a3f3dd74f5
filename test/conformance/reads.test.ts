/**
 * Reads: LIST with resourceVersion, label selectors in every form, field selectors on metadata.name and
 * metadata.namespace, limit/continue pagination (list-limit-2-page*.json), all-namespaces lists.
 * Leases are used because a new namespace on a real cluster already holds a ConfigMap and a
 * ServiceAccount, but no Lease.
 */
import { describe, expect, it } from 'vitest';
import { must, rand, useCluster } from './harness.ts';

const cluster = useCluster();

interface List {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: Array<{ metadata: { name: string; namespace: string } }>;
}

const leases = (ns: string): string => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
const lease = (name: string, labels: Record<string, string> = {}): Record<string, unknown> => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, labels },
  spec: {},
});

async function names(path: string, query: Record<string, string | number>): Promise<string[]> {
  const res = await cluster().api.get<List>(path, { query });
  expect(res.status, res.text).toBe(200);
  return res.body.items.map((i) => i.metadata.name).sort();
}

describe('list', () => {
  it('answers with the List kind, apiVersion and a string resourceVersion usable for a consistent re-list', async () => {
    const ns = await cluster().namespace('reads');
    must(await cluster().api.post(leases(ns), lease('a')), 201);
    const res = await cluster().api.get<List>(leases(ns));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: 'LeaseList', apiVersion: 'coordination.k8s.io/v1' });
    expect(typeof res.body.metadata.resourceVersion).toBe('string');
    expect(res.body.items.map((i) => i.metadata.name)).toEqual(['a']);
    const any = await cluster().api.get<List>(leases(ns), { query: { resourceVersion: '0' } });
    expect(any.status).toBe(200);
  });

  it('serves a re-list at the resourceVersion of a consistent list (resourceVersionMatch=NotOlderThan) at once', async (ctx) => {
    // The list's resourceVersion is etcd's; the watch cache of one resource reaches it only through an
    // event of that resource unless it asks etcd for progress, so an older server answers
    // 504 "Too large resource version" after 3 s when nothing else changed a Lease meanwhile.
    cluster().require(ctx, 'list-from-cache-fresh');
    const ns = await cluster().namespace('reads');
    must(await cluster().api.post(leases(ns), lease('a')), 201);
    const res = must(await cluster().api.get<List>(leases(ns)), 200);
    const again = await cluster().api.get<List>(leases(ns), { query: { resourceVersion: res.metadata.resourceVersion ?? '', resourceVersionMatch: 'NotOlderThan' } });
    expect(again.status, again.text).toBe(200);
    expect(again.body.items.map((i) => i.metadata.name)).toEqual(['a']);
  });

  it('lists items in name order', async () => {
    const ns = await cluster().namespace('reads');
    for (const n of ['c', 'a', 'b']) must(await cluster().api.post(leases(ns), lease(n)), 201);
    const res = await cluster().api.get<List>(leases(ns));
    expect(res.body.items.map((i) => i.metadata.name)).toEqual(['a', 'b', 'c']);
  });

  const labelled: Array<[string, Record<string, string>]> = [
    ['a', { env: 'prod', tier: 'web' }],
    ['b', { env: 'dev', tier: 'web' }],
    ['c', { env: 'prod' }],
    ['d', {}],
  ];
  it.each([
    ['env=prod', ['a', 'c']],
    ['env==prod', ['a', 'c']],
    ['env!=prod', ['b', 'd']],
    ['env in (prod,dev)', ['a', 'b', 'c']],
    ['env notin (prod)', ['b', 'd']],
    ['tier', ['a', 'b']],
    ['!tier', ['c', 'd']],
    ['env=prod,tier=web', ['a']],
    ['env=prod,!tier', ['c']],
    ['env=staging', []],
  ])('filters by labelSelector %s', async (selector, expected) => {
    const ns = await cluster().namespace('reads');
    for (const [n, labels] of labelled) must(await cluster().api.post(leases(ns), lease(n, labels)), 201);
    expect(await names(leases(ns), { labelSelector: selector })).toEqual(expected);
  });

  it('rejects a malformed labelSelector with 400 BadRequest', async () => {
    const ns = await cluster().namespace('reads');
    const res = await cluster().api.get(leases(ns), { query: { labelSelector: 'env in prod' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
  });

  it.each([
    ['metadata.name=b', ['b']],
    ['metadata.name==b', ['b']],
    ['metadata.name!=b', ['a', 'c']],
  ])('filters by fieldSelector %s', async (selector, expected) => {
    const ns = await cluster().namespace('reads');
    for (const n of ['a', 'b', 'c']) must(await cluster().api.post(leases(ns), lease(n)), 201);
    expect(await names(leases(ns), { fieldSelector: selector })).toEqual(expected);
  });

  it('filters an all-namespaces list by fieldSelector metadata.namespace', async () => {
    const tag = rand();
    const ns1 = await cluster().namespace('reads');
    const ns2 = await cluster().namespace('reads');
    must(await cluster().api.post(leases(ns1), lease('x', { tag })), 201);
    must(await cluster().api.post(leases(ns2), lease('y', { tag })), 201);
    const res = await cluster().api.get<List>('/apis/coordination.k8s.io/v1/leases', { query: { fieldSelector: `metadata.namespace=${ns2}`, labelSelector: `tag=${tag}` } });
    expect(res.body.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual([`${ns2}/y`]);
  });

  it('lists across namespaces at the cluster-wide path', async () => {
    const tag = rand();
    const ns1 = await cluster().namespace('reads');
    const ns2 = await cluster().namespace('reads');
    must(await cluster().api.post(leases(ns1), lease('x', { tag })), 201);
    must(await cluster().api.post(leases(ns2), lease('y', { tag })), 201);
    const res = await cluster().api.get<List>('/apis/coordination.k8s.io/v1/leases', { query: { labelSelector: `tag=${tag}` } });
    expect(res.status).toBe(200);
    expect(res.body.kind).toBe('LeaseList');
    expect(res.body.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`).sort()).toEqual([`${ns1}/x`, `${ns2}/y`].sort());
  });

  it('filters core events by the involvedObject and type field selectors kubectl describe uses', async () => {
    const ns = await cluster().namespace('reads');
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const event = (name: string, target: string, type: string): Record<string, unknown> => ({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name },
      involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: target, namespace: ns, uid: `uid-${target}` },
      reason: 'Test',
      message: 'm',
      source: { component: 'conformance' },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      type,
    });
    for (const [n, t, type] of [['e1', 'a', 'Normal'], ['e2', 'a', 'Warning'], ['e3', 'b', 'Normal']] as const) {
      must(await cluster().api.post(`/api/v1/namespaces/${ns}/events`, event(n, t, type)), 201);
    }
    const path = `/api/v1/namespaces/${ns}/events`;
    expect(await names(path, { fieldSelector: `involvedObject.name=a,involvedObject.namespace=${ns},involvedObject.kind=ConfigMap,involvedObject.uid=uid-a` })).toEqual(['e1', 'e2']);
    expect(await names(path, { fieldSelector: 'type=Warning' })).toEqual(['e2']);
  });

  it('rejects an unsupported fieldSelector with 400 BadRequest', async () => {
    const ns = await cluster().namespace('reads');
    const res = await cluster().api.get(leases(ns), { query: { fieldSelector: 'spec.holderIdentity=x' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
  });
});

describe('pagination', () => {
  it('pages with limit and continue, counting the remaining items, all at one resourceVersion', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('page');
    for (const n of ['p1', 'p2', 'p3', 'p4', 'p5']) must(await api.post(leases(ns), lease(n)), 201);
    const page1 = must(await api.get<List>(leases(ns), { query: { limit: 2 } }), 200);
    expect(page1.items.map((i) => i.metadata.name)).toEqual(['p1', 'p2']);
    expect(page1.metadata.continue).toEqual(expect.any(String));
    expect(page1.metadata.remainingItemCount).toBe(3);
    // An object created between pages must not appear: the pages are a snapshot.
    must(await api.post(leases(ns), lease('p3a')), 201);
    const page2 = must(await api.get<List>(leases(ns), { query: { limit: 2, continue: page1.metadata.continue ?? '' } }), 200);
    expect(page2.items.map((i) => i.metadata.name)).toEqual(['p3', 'p4']);
    expect(page2.metadata.remainingItemCount).toBe(1);
    expect(page2.metadata.resourceVersion).toBe(page1.metadata.resourceVersion);
    const page3 = must(await api.get<List>(leases(ns), { query: { limit: 2, continue: page2.metadata.continue ?? '' } }), 200);
    expect(page3.items.map((i) => i.metadata.name)).toEqual(['p5']);
    expect(page3.metadata.continue ?? '').toBe('');
    expect(page3.metadata.remainingItemCount).toBeUndefined();
  });

  it('returns everything without continue when limit covers the list', async () => {
    const ns = await cluster().namespace('page');
    for (const n of ['a', 'b']) must(await cluster().api.post(leases(ns), lease(n)), 201);
    const res = must(await cluster().api.get<List>(leases(ns), { query: { limit: 5 } }), 200);
    expect(res.items).toHaveLength(2);
    expect(res.metadata.continue ?? '').toBe('');
    expect(res.metadata.remainingItemCount).toBeUndefined();
  });

  it('rejects a malformed continue token with 400 BadRequest', async () => {
    const ns = await cluster().namespace('page');
    const res = await cluster().api.get(leases(ns), { query: { limit: 2, continue: 'not-a-token' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
  });
});
