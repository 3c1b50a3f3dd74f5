/**
 * Two and three electors on one Lease of the test API server, on the real clock with short
 * durations (lease 1 s, renew deadline 700 ms, retry 150 ms). Each replica also runs a writer that
 * PATCHes a ConfigMap every 10 ms through a client whose writes pass the replica's gate, as the
 * controller's writes do: the server must see those writes from one replica at a time, in the order
 * leadership passed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, KubeConfig, ResourceClient, type KubeObject, type ResourceType } from '../../../src/kube/index.ts';
import { LeaderElector } from '../../../src/runtime/leader-elector.ts';
import { createLeaseLock, type LeaseLock, type LeaseObject } from '../../../src/runtime/lease-lock.ts';
import { WriteGateClosedError } from '../../../src/runtime/write-gate.ts';
import { startTestApiServer, type TestApiServer } from '../../apiserver/index.ts';

const LEASES: ResourceType = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true };
const CONFIG_MAPS: ResourceType = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
const NS = 'leader-test';
const LEASE = 'op-leader';

let server: TestApiServer;

async function adminRequest(method: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(server.url + path, {
    method,
    headers: { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
}

beforeAll(async () => {
  server = await startTestApiServer();
  await adminRequest('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  // Shipped by the synth with an empty spec; the electors only ever GET and PUT it.
  await adminRequest('POST', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`, {
    apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: LEASE }, spec: {},
  });
  await adminRequest('POST', `/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fenced' }, data: {} });
});

afterAll(async () => {
  await server?.stop();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One replica: an elector on its own lease client, and a writer behind its gate. */
function replica(identity: string) {
  const config = new KubeConfig({ server: server.url, auth: { type: 'token', token: server.userToken(identity, ['system:masters']) } });
  const leases = new ResourceClient<LeaseObject & KubeObject>(new KubeClient({ config }), LEASES);
  let cut = false;
  const inner = createLeaseLock({
    namespace: NS,
    name: LEASE,
    client: { get: (namespace, name) => leases.get({ namespace, name }), update: (lease) => leases.update(lease as LeaseObject & KubeObject) },
  });
  // "Killed" for the lease: its requests never come back (and never arrive), and it cannot release.
  const hang = new Promise<never>(() => {});
  const lock: LeaseLock = {
    get: () => (cut ? hang : inner.get()),
    update: (record, rv) => (cut ? hang : inner.update(record, rv)),
    describe: () => inner.describe(),
  };
  let startedAt = -1;
  const elector = new LeaderElector({
    lock,
    identity,
    leaseDurationMs: 1_000,
    renewDeadlineMs: 700,
    retryPeriodMs: 150,
    onStartedLeading: () => (startedAt = Date.now()),
  });
  const gated = new KubeClient({ config, beforeWrite: (method, path) => elector.gate.check(`${method} ${path}`) });
  const configMaps = new ResourceClient<KubeObject>(gated, CONFIG_MAPS);
  const controller = new AbortController();
  const running = elector.run(controller.signal);
  const stats = { refused: 0, written: 0, errors: [] as unknown[] };
  let writing = true;
  const writer = (async () => {
    while (writing) {
      try {
        await configMaps.patch({ namespace: NS, name: 'fenced' }, { metadata: { annotations: { writer: identity } } }, { type: 'merge' });
        stats.written++;
      } catch (err) {
        if (err instanceof WriteGateClosedError) stats.refused++;
        else stats.errors.push(err);
      }
      await sleep(10);
    }
  })();
  return {
    identity,
    elector,
    controller,
    running,
    stats,
    startedAt: () => startedAt,
    cutLease: () => void (cut = true),
    stopWriting: async () => {
      writing = false;
      await writer;
    },
  };
}

type Replica = ReturnType<typeof replica>;

/** Samples every replica's gate every millisecond, recording violations and open intervals. */
function monitor(replicas: () => Replica[]) {
  const violations: string[] = [];
  const lastOpen = new Map<string, number>();
  const firstOpen = new Map<string, number>();
  const timer = setInterval(() => {
    const now = Date.now();
    const open = replicas().filter((r) => r.elector.gate.isOpen());
    if (open.length > 1) violations.push(`${open.map((r) => r.identity).join(' and ')} open at ${now}`);
    for (const r of open) {
      lastOpen.set(r.identity, now);
      if (!firstOpen.has(r.identity)) firstOpen.set(r.identity, now);
    }
  }, 1);
  return { violations, lastOpen, firstOpen, stop: () => clearInterval(timer) };
}

async function waitFor(what: string, condition: () => boolean, timeoutMs: number): Promise<number> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await sleep(2);
  }
  return Date.now() - start;
}

describe('leader election against the test API server', () => {
  it('keeps one leader at a time through a release and a silent death, and the server sees fenced writes from one replica at a time', async () => {
    const all: Replica[] = [];
    const watch = monitor(() => all);
    try {
      all.push(replica('replica-a'), replica('replica-b'));
      await waitFor('a leader is elected', () => all.some((r) => r.elector.isLeader()), 3_000);
      await sleep(1_500);
      const first = all.find((r) => r.elector.isLeader())!;
      const second = all.find((r) => r !== first)!;
      expect(second.elector.isLeader()).toBe(false);
      expect(second.elector.gate.isOpen()).toBe(false);
      expect(second.stats.refused).toBeGreaterThan(0);

      // Handover 1: the leader stops and releases; the other takes over at its next retry.
      const releasedAt = Date.now();
      first.controller.abort();
      await first.running;
      await first.stopWriting();
      await waitFor('the other replica leads after the release', () => second.elector.isLeader(), 2_000);
      const afterRelease = second.startedAt() - releasedAt;
      expect(afterRelease).toBeLessThan(700);

      // Handover 2: the new leader's lease traffic dies without a release while it keeps trying to write.
      const third = replica('replica-c');
      all.push(third);
      await sleep(1_000);
      expect(third.elector.isLeader()).toBe(false);
      const cutAt = Date.now();
      second.cutLease();
      await waitFor('the third replica leads after the lease expired', () => third.elector.isLeader(), 4_000);
      const afterExpiry = third.startedAt() - cutAt;
      // It must wait out the lease (1 s from its last view of a renewal, which was ≤ 1 retry before the cut).
      expect(afterExpiry).toBeGreaterThanOrEqual(1_000 - 150 - 50);
      expect(afterExpiry).toBeLessThan(3_000);
      await second.running;
      expect(second.elector.healthy()).toBe(false);
      await sleep(500);
      // The silent leader's gate closed strictly before the new leader's opened (as sampled every ms).
      expect(watch.firstOpen.get(third.identity)).toBeDefined();
      expect(watch.lastOpen.get(second.identity)!).toBeLessThan(watch.firstOpen.get(third.identity)!);
      await second.stopWriting();
      third.controller.abort();
      await third.running;
      await third.stopWriting();

      expect(watch.violations).toEqual([]);
      for (const r of all) expect(r.stats.errors).toEqual([]);
      expect(all.map((r) => r.stats.written > 0)).toEqual([true, true, true]);
      expect(second.stats.refused).toBeGreaterThan(0);

      // Server side: successful ConfigMap writes come in one run per leader, in the order of leadership.
      const writers = server.requestLog
        .entries()
        .filter((e) => e.resource === 'configmaps' && e.verb === 'patch' && e.code === 200)
        .map((e) => e.user);
      const runs = writers.filter((u, i) => u !== writers[i - 1]);
      expect(runs).toEqual([first.identity, second.identity, third.identity]);
      // And the lease was never created by an elector, only read and updated.
      const leaseVerbs = new Set(server.requestLog.entries().filter((e) => e.resource === 'leases' && e.user.startsWith('replica-')).map((e) => e.verb));
      expect([...leaseVerbs].sort()).toEqual(['get', 'update']);
    } finally {
      watch.stop();
      for (const r of all) {
        r.controller.abort();
        r.cutLease();
      }
    }
  }, 30_000);
});
