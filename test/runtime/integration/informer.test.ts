/**
 * The informer against the test API server: the failure modes a real cluster produces (dropped
 * watches, compaction, 5xx and 429 on LIST) and a large paginated LIST. Real time, short backoffs.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../../apiserver/index.ts';
import { KubeClient, type RequestObservation } from '../../../src/kube/kube-client.ts';
import { KubeConfig } from '../../../src/kube/kube-config.ts';
import type { KubeObject } from '../../../src/kube/object.ts';
import { ResourceClient, type ListOptions } from '../../../src/kube/resource-client.ts';
import type { ListWatchSource } from '../../../src/runtime/list-watch-source.ts';
import { Informer } from '../../../src/runtime/informer.ts';

let server: TestApiServer;
let observed: RequestObservation[];
let kube: KubeClient;
let configMaps: ResourceClient<KubeObject>;
const informers: Informer<KubeObject>[] = [];

beforeEach(async () => {
  server = await startTestApiServer({ bookmarkIntervalMs: 200 });
  observed = [];
  kube = new KubeClient({ config: KubeConfig.fromKubeconfig(server.kubeconfig()), onRequest: (o) => observed.push(o) });
  configMaps = new ResourceClient<KubeObject>(kube, { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true });
});

afterEach(async () => {
  await Promise.all(informers.splice(0).map((i) => i.stop()));
  kube.close();
  await server.stop();
});

async function waitFor(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function cm(name: string, data: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data };
}

async function createMany(names: string[], concurrency = 32): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < names.length) await configMaps.create(cm(names[next++]!));
  }));
}

/** Starts an informer recording handler calls as `add name@rv`, `update name`, `delete name@rv`. */
function startInformer(listCalls: ListOptions[] = []): { informer: Informer<KubeObject>; events: string[] } {
  const source: ListWatchSource<KubeObject> = {
    list: (options) => {
      listCalls.push(options);
      return configMaps.list(options);
    },
    watch: (options) => configMaps.watch(options),
    typeMeta: () => configMaps.typeMeta(),
  };
  const informer = new Informer<KubeObject>({ name: 'configmaps', source, namespace: 'default', backoff: { initialMs: 20, maxMs: 100 } });
  informers.push(informer);
  const events: string[] = [];
  informer.addEventHandler({
    onAdd: (o) => events.push(`add ${o.metadata.name}`),
    onUpdate: (a, b) => events.push(`update ${b.metadata.name} ${String((a['data'] as Record<string, string>)['v'])}->${String((b['data'] as Record<string, string>)['v'])}`),
    onDelete: (o) => events.push(`delete ${o.metadata.name}@${o.metadata.resourceVersion}`),
  });
  informer.start();
  return { informer, events };
}

async function serverKeys(): Promise<string[]> {
  const list = await configMaps.list({ namespace: 'default' });
  return list.items.map((o) => `default/${o.metadata.name}`).sort();
}

describe('Informer against the test API server', () => {
  it('reconnects after watches are dropped mid-stream and loses no event', async () => {
    await createMany(['a', 'b']);
    const { informer, events } = startInformer();
    await waitFor('sync', () => informer.hasSynced());
    for (let round = 0; round < 5; round++) {
      await configMaps.create(cm(`r${round}`));
      server.closeWatches();
      await configMaps.create(cm(`s${round}`));
      await configMaps.delete({ namespace: 'default', name: `r${round}` });
    }
    await waitFor('all events', () => events.filter((e) => e.startsWith('delete')).length === 5 && informer.store.size === 7);
    expect(informer.store.keys().sort()).toEqual(await serverKeys());
    for (let round = 0; round < 5; round++) {
      expect(events).toContain(`add r${round}`);
      expect(events).toContain(`add s${round}`);
    }
    const watchRequests = observed.filter((o) => o.method === 'GET' && o.code === '200').length;
    expect(watchRequests).toBeGreaterThanOrEqual(6); // 1 list + at least 5 re-opened watches
  });

  it('relists after 410 on reconnect and emits the deletes, updates and adds it missed', async () => {
    await createMany(['keep', 'gone', 'change']);
    await configMaps.patch({ namespace: 'default', name: 'change' }, { data: { v: '1' } });
    const { informer, events } = startInformer();
    await waitFor('sync', () => informer.hasSynced());
    const lastKnownGone = informer.store.get('default/gone')!.metadata.resourceVersion;
    // Keep the watch down while the world changes, then compact the history it would resume from.
    const fault = server.faults.add({ verb: 'watch', resource: 'configmaps', code: 503 });
    server.closeWatches();
    await waitFor('a refused watch', () => observed.some((o) => o.code === '503'));
    events.length = 0;
    await configMaps.delete({ namespace: 'default', name: 'gone' });
    await configMaps.patch({ namespace: 'default', name: 'change' }, { data: { v: '2' } });
    await configMaps.create(cm('new'));
    server.compactHistory();
    server.faults.remove(fault);
    await waitFor('relist', () => events.length === 3);
    expect(events.sort()).toEqual([`add new`, `delete gone@${lastKnownGone}`, 'update change 1->2']);
    expect(informer.store.keys().sort()).toEqual(await serverKeys());
    expect(informer.health().consecutiveFailures).toBe(0);
  });

  it('retries a LIST that fails with 500s and a 429 (honouring Retry-After), then syncs', async () => {
    await createMany(['a']);
    observed.length = 0;
    server.faults.add({ verb: 'list', resource: 'configmaps', code: 500, count: 2 });
    server.faults.add({ verb: 'list', resource: 'configmaps', code: 429, count: 1, retryAfterSeconds: 1 });
    const started = Date.now();
    const { informer } = startInformer();
    await waitFor('sync', () => informer.hasSynced());
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(observed.slice(0, 4).map((o) => o.code)).toEqual(['500', '500', '429', '200']);
    expect(informer.store.keys()).toEqual(['default/a']);
  });

  it('syncs a 10,000-object LIST in pages of 500', async () => {
    await createMany(Array.from({ length: 10_000 }, (_, i) => `cm-${i}`));
    const listCalls: ListOptions[] = [];
    const { informer, events } = startInformer(listCalls);
    await waitFor('sync', () => informer.hasSynced(), 20_000);
    expect(listCalls.map((c) => c.limit)).toEqual(Array(20).fill(500));
    expect(listCalls.filter((c) => c.continue !== undefined)).toHaveLength(19);
    expect(informer.store.size).toBe(10_000);
    expect(events).toHaveLength(10_000);
    expect(informer.store.getByNamespaceName('default', 'cm-9999')?.metadata.managedFields).toBeUndefined();
  }, 60_000);
});
