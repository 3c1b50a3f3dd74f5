/**
 * The Manager against the test API server: informers shared between controllers (one LIST and one
 * WATCH per resource, namespace and selector however many controllers ask), every controller started
 * once the caches are there, and the ordered shutdown stopping them, the flushes and the watches.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../../apiserver/index.ts';
import { KubeConfig } from '../../../src/kube/kube-config.ts';
import type { KubeObject } from '../../../src/kube/object.ts';
import { ResourceClient, type ResourceType } from '../../../src/kube/resource-client.ts';
import { isCacheStub, MAX_OBJECT_BUDGET, type CachePolicy } from '../../../src/runtime/cache-policy.ts';
import { silentLogger } from '../../../src/runtime/logger.ts';
import { Manager, type ManagedController } from '../../../src/runtime/manager.ts';

const CONFIG_MAPS: ResourceType = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true };
/** A policy that keeps objects as they come, within the largest budget. */
const KEEP: CachePolicy<KubeObject> = { transform: (o) => o, maxObjectBytes: MAX_OBJECT_BUDGET };

let server: TestApiServer;
let manager: Manager | undefined;

beforeEach(async () => {
  server = await startTestApiServer({ bookmarkIntervalMs: 200 });
});

afterEach(async () => {
  await manager?.shutdown(1_000);
  manager = undefined;
  await server.stop();
});

function newManager(): Manager {
  manager = new Manager({ config: KubeConfig.fromKubeconfig(server.kubeconfig()), userAgent: 'manager-test', identity: 'test', pageSize: 50, syncPeriodMs: 0, logger: silentLogger });
  return manager;
}

/** A controller that records what the manager asks of it. */
function recordingController(name: string, calls: string[]): ManagedController {
  return {
    name,
    start: async () => void calls.push(`${name}:start`),
    pause: async () => void calls.push(`${name}:pause`),
    resume: () => void calls.push(`${name}:resume`),
    stop: async () => {
      calls.push(`${name}:stop`);
      return true;
    },
  };
}

async function waitFor(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('Manager', () => {
  it('shares one informer per resource, namespace and selector between controllers', async () => {
    const m = newManager();
    const a = m.informer<KubeObject>({ resource: CONFIG_MAPS, namespace: 'default', cache: KEEP });
    const b = m.informer<KubeObject>({ resource: CONFIG_MAPS, namespace: 'default', cache: KEEP });
    const otherSelector = m.informer<KubeObject>({ resource: CONFIG_MAPS, namespace: 'default', labelSelector: 'a=b', cache: KEEP });
    const otherNamespace = m.informer<KubeObject>({ resource: CONFIG_MAPS, namespace: 'other', cache: KEEP });
    const otherResource = m.informer<KubeObject>({ resource: SECRETS, namespace: 'default', cache: KEEP });
    expect(b).toBe(a);
    expect(new Set([a, otherSelector, otherNamespace, otherResource]).size).toBe(4);
    expect(m.informers).toHaveLength(4);
    expect(a.name).toBe('configmaps@default');
    expect(() => m.informer<KubeObject>({ resource: CONFIG_MAPS, namespace: 'default', cache: { ...KEEP } })).toThrow(/shared and was requested with another cache policy/);
    expect(() => m.informer<KubeObject>({ resource: CONFIG_MAPS, namespace: 'default', cache: KEEP, resyncPeriodMs: 60_000 })).toThrow(/shared and was requested with another resync period/);
    expect(() => m.informer<KubeObject>({ resource: CONFIG_MAPS, namespace: 'default', cache: KEEP, startAfter: async () => undefined })).toThrow(/shared and was requested with another start condition/);
  });

  it('builds no informer without a cache policy, or with a budget that bounds nothing', () => {
    const m = newManager();
    expect(() => m.informer({ resource: CONFIG_MAPS } as never)).toThrow('informer configmaps: a cache policy with a transform is required (src/runtime/cache-policy.ts)');
    expect(() => m.informer<KubeObject>({ resource: CONFIG_MAPS, cache: { transform: (o) => o, maxObjectBytes: Infinity } })).toThrow('informer configmaps: cache policy maxObjectBytes must be an integer from 1024 to 65536, got Infinity');
    expect(() => m.informer<KubeObject>({ resource: CONFIG_MAPS, cache: { transform: (o) => o, maxObjectBytes: 100 } })).toThrow(/from 1024 to 65536, got 100/);
  });

  it('caches an object over its budget as a stub of its identity', async () => {
    const m = newManager();
    const configMaps = new ResourceClient<KubeObject>(m.client, CONFIG_MAPS);
    await configMaps.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'small', namespace: 'default' }, data: { a: 'b' } });
    await configMaps.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'large', namespace: 'default' }, data: { a: 'x'.repeat(2048) } });
    const informer = m.informer<KubeObject>({ resource: CONFIG_MAPS, namespace: 'default', cache: { transform: (o) => o, maxObjectBytes: 1024 } });
    await m.start();
    await waitFor('the LIST', () => informer.hasSynced());
    expect(informer.store.get('default/small')?.['data']).toEqual({ a: 'b' });
    const large = informer.store.get('default/large');
    expect(large).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'large', namespace: 'default', uid: expect.any(String), resourceVersion: expect.any(String), creationTimestamp: expect.any(String) } });
    expect(isCacheStub(large!)).toBe(true);
    expect(isCacheStub(informer.store.get('default/small')!)).toBe(false);
  });

  it('starts an informer with a start condition only once it is met, and never after shutdown began', async () => {
    const m = newManager();
    let allow: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (allow = resolve));
    const gated = m.informer<KubeObject>({ resource: CONFIG_MAPS, namespace: 'default', cache: KEEP, startAfter: () => gate });
    const never = m.informer<KubeObject>({ resource: SECRETS, namespace: 'default', cache: KEEP, startAfter: (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))) });
    await m.start();
    const lists = (resource: string): number => server.requestLog.entries().filter((e) => e.resource === resource && e.verb === 'list').length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(lists('configmaps')).toBe(0);
    allow();
    await waitFor('the gated informer to sync', () => gated.hasSynced());
    await m.shutdown(1_000);
    manager = undefined;
    expect(never.hasSynced()).toBe(false);
    expect(lists('secrets')).toBe(0);
  });

  it('lists and watches a shared informer once, feeds both controllers\' handlers, starts and stops every controller', async () => {
    const m = newManager();
    await new ResourceClient<KubeObject>(m.client, CONFIG_MAPS).create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one', namespace: 'default' } });
    const seen: string[] = [];
    const calls: string[] = [];
    for (const name of ['first', 'second']) {
      m.informer<KubeObject>({ resource: CONFIG_MAPS, namespace: 'default', cache: KEEP }).addEventHandler({ onAdd: (o) => seen.push(`${name}:${o.metadata.name ?? ''}`) });
      m.add(recordingController(name, calls));
    }
    m.addFlush(async () => void calls.push('flush'));
    await m.start();
    await waitFor('both handlers', () => seen.length === 2);
    expect(seen.sort()).toEqual(['first:one', 'second:one']);
    expect(calls).toEqual(['first:start', 'second:start']);
    const count = (verb: string): number => server.requestLog.entries().filter((e) => e.resource === 'configmaps' && e.verb === verb).length;
    // The watch starts after the LIST's objects reached the handlers.
    await waitFor('the watch', () => count('watch') > 0);
    expect(count('list')).toBe(1);
    expect(count('watch')).toBe(1);
    expect(() => m.add(recordingController('late', calls))).toThrow(/before start/);
    await m.shutdown(1_000);
    expect(calls).toEqual(['first:start', 'second:start', 'first:stop', 'second:stop', 'flush']);
    manager = undefined;
  });
});
