/**
 * R2, API fault storm: while N schedules are created, 30 % of them edited and 10 % deleted, the test
 * API server fails the controller's requests (30 % of writes 409, 5 % 500, 2 % 429 with Retry-After),
 * drops every watch every few seconds after compacting its history (re-watches get 410), and adds
 * 200-500 ms latency spikes. Then: the exact expected state, writes ≤ 3 × minimal, no write once the
 * faults stop and it converged, and the controller never exited.
 */
import type { FaultRule } from '../apiserver/index.ts';
import { CONTROLLER_USER, sleep, startCluster, type Cluster } from '../e2e/harness.ts';
import { api } from '../e2e/scenarios.ts';
import { createSchedules, SCHEDULES, startController } from './chaos-cluster.ts';
import { foreignWrites, idleWrites, settled, waitConverged, writesBy } from './invariants.ts';
import { Rng } from './random.ts';
import { finishRow, fmt, Verdict, writesFigure, type Scenario, type ScenarioContext, type ScenarioResult } from './scenario.ts';

const SIZES = {
  full: { schedules: 1_000, idleMs: 10_000, convergeMs: 240_000, opsPerSecond: 100 },
  reduced: { schedules: 100, idleMs: 3_000, convergeMs: 60_000, opsPerSecond: 60 },
} as const;

const WRITE_VERBS = ['create', 'update', 'patch'] as const;
const READ_VERBS = ['get', 'list', 'watch'] as const;

/**
 * The storm's error rules for `user`: the injector lets the first rule that draws a failure decide, so
 * each later rule's fraction is conditional on the earlier ones not firing; overall a write fails
 * 30 % with 409, 5 % with 500 and 2 % with 429, a read 5 % with 500 and 2 % with 429.
 */
export function stormRules(user: string): FaultRule[] {
  const rules: FaultRule[] = [];
  for (const verb of WRITE_VERBS) {
    rules.push({ user, verb, code: 409, fraction: 0.3 }, { user, verb, code: 500, fraction: 0.05 / 0.7 }, { user, verb, code: 429, retryAfterSeconds: 1, fraction: 0.02 / 0.65 });
  }
  for (const verb of READ_VERBS) rules.push({ user, verb, code: 500, fraction: 0.05 }, { user, verb, code: 429, retryAfterSeconds: 1, fraction: 0.02 / 0.95 });
  return rules;
}

/** Drops every watch every 2-5 s, after compacting history so the re-watch gets 410 Gone; and latency spikes. */
function disturb(cluster: Cluster, rng: Rng, user: string, stop: AbortSignal): Promise<unknown> {
  const watchDrops = (async () => {
    let drops = 0;
    while (!stop.aborted) {
      await sleep(rng.int(2_000, 5_000));
      cluster.server.compactHistory();
      cluster.server.closeWatches();
      drops++;
    }
    return drops;
  })();
  const spikes = (async () => {
    while (!stop.aborted) {
      await sleep(rng.int(1_000, 4_000));
      const id = cluster.server.faults.add({ user, latencyMs: rng.int(200, 500) });
      await sleep(rng.int(300, 1_000));
      cluster.server.faults.remove(id);
    }
  })();
  return Promise.all([watchDrops, spikes]);
}

type Op = { kind: 'create' | 'edit' | 'delete'; name: string; schedule?: string };

/** The user's changes: every create, then 30 % edits and 10 % deletes at random later positions. */
function workload(rng: Rng, n: number): { ops: Op[]; expected: Map<string, { schedule: string }>; edits: number; deletes: number } {
  const names = Array.from({ length: n }, (_, i) => `fault-${i}`);
  const shuffled = rng.shuffle(names);
  const edited = new Set(shuffled.slice(0, Math.round(n * 0.3)));
  const deleted = new Set(shuffled.slice(Math.round(n * 0.3), Math.round(n * 0.4)));
  const ops: Op[] = names.map((name) => ({ kind: 'create', name }));
  const expected = new Map(names.map((name) => [name, { schedule: '0 2 * * *' }]));
  for (const name of names) {
    if (!edited.has(name) && !deleted.has(name)) continue;
    const at = ops.findIndex((o) => o.name === name) + 1 + rng.int(0, Math.floor(n / 4));
    if (edited.has(name)) {
      const schedule = rng.pick(SCHEDULES.slice(1));
      ops.splice(Math.min(at, ops.length), 0, { kind: 'edit', name, schedule });
      expected.set(name, { schedule });
    } else {
      ops.splice(Math.min(at, ops.length), 0, { kind: 'delete', name });
      expected.delete(name);
    }
  }
  return { ops, expected, edits: edited.size, deletes: deleted.size };
}

/**
 * Runs `ops` at `perSecond` (so the changes span several watch drops and spikes), at most `parallel`
 * in flight, each object's ops in order.
 */
async function apply(cluster: Cluster, namespace: string, ops: readonly Op[], perSecond: number, parallel = 8): Promise<void> {
  const k = api(cluster.admin);
  const chains = new Map<string, Promise<void>>();
  const start = Date.now();
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < ops.length) {
      const wait = start + (next / perSecond) * 1000 - Date.now();
      if (wait > 0) {
        await sleep(wait);
        continue;
      }
      const op = ops[next++] as Op;
      const run = async (): Promise<void> => {
        if (op.kind === 'create') await createSchedules(cluster, namespace, [op.name], 1);
        else if (op.kind === 'edit') await k.schedules.patch({ namespace, name: op.name }, { spec: { schedule: op.schedule } }, { type: 'merge' });
        else await k.schedules.delete({ namespace, name: op.name });
      };
      const chained = (chains.get(op.name) ?? Promise.resolve()).then(run);
      chains.set(op.name, chained);
      await chained;
    }
  }));
}

async function run(context: ScenarioContext): Promise<ScenarioResult> {
  const size = SIZES[context.scale];
  const rng = new Rng(context.seed);
  const started = Date.now();
  const verdict = new Verdict();
  const namespace = 'faults';
  const users = new Set([CONTROLLER_USER]);
  // Separate generators: the fault draws do not shift with the timing of the disturbances.
  const faultRng = rng.fork(1);
  const cluster = await startCluster({ server: { faultRandom: () => faultRng.float() } });
  const controller = startController(context.bundle, cluster.controllerKubeconfig, ['--concurrency=4']);
  const stop = new AbortController();
  try {
    await api(cluster.admin).createNamespace(namespace);
    await controller.waitForLog('workers to start', (r) => r['msg'] === 'starting workers');
    cluster.server.requestLog.clear();
    const { ops, expected, edits, deletes } = workload(rng.fork(2), size.schedules);
    const ruleIds = stormRules(CONTROLLER_USER).map((r) => cluster.server.faults.add(r));
    const disturbances = disturb(cluster, rng.fork(3), CONTROLLER_USER, stop.signal);
    const applyStart = Date.now();
    await apply(cluster, namespace, ops, size.opsPerSecond);
    const applySeconds = (Date.now() - applyStart) / 1000;
    context.log(`R2: ${ops.length} user changes applied in ${applySeconds.toFixed(1)} s`);
    const converged = await waitConverged(cluster.admin, { namespace, schedules: expected }, size.convergeMs, 1_000);
    verdict.expectNone(converged.problems, 'not converged under faults');
    stop.abort();
    const [drops] = (await disturbances) as [number];
    for (const id of ruleIds) cluster.server.faults.remove(id);
    cluster.server.faults.clear();
    const afterFaults = await waitConverged(cluster.admin, { namespace, schedules: expected }, 30_000);
    verdict.expectNone(afterFaults.problems, 'not converged after the faults stopped');
    await settled(cluster.server, users);
    const idle = await idleWrites(cluster.server, users, size.idleMs);
    verdict.expect(idle.length === 0, `${idle.length} writes in the ${size.idleMs / 1000} s idle window after the faults: ${idle.slice(0, 3).map((w) => `${w.verb} ${w.resource} ${w.name}`).join(', ')}`);
    const entries = cluster.server.requestLog.entries();
    const writes = writesBy(entries, users);
    const minimal = 2 * (size.schedules + edits);
    verdict.expect(writes.length <= 3 * minimal, `${writes.length} writes > 3 × ${minimal} minimal`);
    verdict.expectNone(foreignWrites(entries, users, namespace), 'wrote to other objects');
    verdict.expect(controller.child.exitCode === null && controller.child.signalCode === null, `the controller exited (${controller.child.exitCode ?? controller.child.signalCode})`);
    const injected = (code: number) => writesBy(entries, users, { events: true }).filter((w) => w.code === code).length;
    // The reflector logs the first 410 of a streak at info (and relists at once); the rest as retried failures.
    const expired = controller.records().filter((r) => r['msg'] === 'resourceVersion expired; relisting' || (r['msg'] === 'list/watch failed; retrying' && /too old resource version|expired/i.test(String(r['err'])))).length;
    verdict.expect(expired > 0, `no re-watch was answered 410 Expired in ${drops} watch drops after compaction`);
    return finishRow(context, started, verdict, {
      id: 'R2',
      done: `${fmt(size.schedules)} creates, ${fmt(edits)} edits, ${fmt(deletes)} deletes under 30 % 409 / 5 % 500 / 2 % 429 (Retry-After), ${drops} watch drops after compacting history (${expired} re-watches answered 410), 200-500 ms latency spikes`,
      invariants: ['exact expected state', 'writes ≤ 3 × minimal', `0 writes in ${size.idleMs / 1000} s idle after faults`, 'never exited', 'no foreign writes', 'some re-watches got 410'],
      writes: writesFigure(writes.length, minimal),
      figures: {
        'minimal': '2 per create + 2 per edit',
        'injected on writes (409/500/429)': `${injected(409)}/${injected(500)}/${injected(429)}`,
        'user changes over': `${applySeconds.toFixed(1)} s`,
        'last change → converged': `${(converged.ms / 1000).toFixed(1)} s`,
      },
    });
  } finally {
    stop.abort();
    await controller.stop();
    await cluster.stop();
  }
}

/** R2: the API fault storm. */
export const faultStorm: Scenario = { id: 'R2', title: 'API fault storm', run };
