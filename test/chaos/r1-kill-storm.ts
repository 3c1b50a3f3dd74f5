/**
 * R1, kill -9 storm: N new BackupSchedules; the controller bundle (its own process, dist/ RBAC) is
 * SIGKILLed at random moments at least K times during convergence and restarted at once. Then: the
 * converged state (one child each, controlled by its schedule, Ready at its generation), no other
 * object touched, and no write at all in an idle window.
 */
import type { RequestLogEntry } from '../apiserver/index.ts';
import type { ControllerProcess } from '../e2e/harness.ts';
import { CONTROLLER_USER, startCluster, type Cluster } from '../e2e/harness.ts';
import { api } from '../e2e/scenarios.ts';
import { createSchedules, startController } from './chaos-cluster.ts';
import { foreignWrites, idleWrites, settled, isWrite, waitConverged, writesBy } from './invariants.ts';
import { Rng } from './random.ts';
import { finishRow, fmt, Verdict, writesFigure, type Scenario, type ScenarioContext, type ScenarioResult } from './scenario.ts';

const SIZES = {
  full: { schedules: 1_000, kills: 100, idleMs: 10_000 },
  reduced: { schedules: 80, kills: 5, idleMs: 3_000 },
} as const;

/**
 * Kill moments: half of the kills fall uniformly in the first 20–600 ms of a life (cut short by its
 * first write), the other half the moment its k-th write reaches the API server, k drawn uniformly
 * from 1 to twice an even share of the writes still to make: cutting into reconciles mid-burst (a
 * create whose answer is lost, a create without its status write, requests in flight) while the
 * storm as a whole lands at most {@link STORM_SHARE} of the minimal writes. A fixed later moment
 * (a window after the first write, the n-th write, a start-up delay of up to 600 ms on a machine
 * where start-up takes 300) let a fast machine converge 1,000 schedules after 60–80 kills, short of
 * the 100 the scenario must land during convergence.
 */
const STARTUP_SHARE = 0.5;
/** The share of the minimal writes the lives killed at a write may make between them; the rest is left for after the storm. */
const STORM_SHARE = 0.8;

/**
 * SIGKILLs `process` after `delayMs`, or the moment its `atWrite`-th write reaches the API server if
 * that comes sooner (a request-log listener, run synchronously as the request arrives: polling the
 * log would lag behind a burst, which holds this process's event loop); resolves once it is dead.
 */
async function killAtWrite(cluster: Cluster, user: string, process: ControllerProcess, atWrite: number, delayMs: number): Promise<void> {
  const kill = (): void => void process.child.kill('SIGKILL');
  let writes = 0;
  const unsubscribe = cluster.server.requestLog.onEntry((e) => {
    if (e.user === user && isWrite(e) && e.resource !== 'events' && ++writes >= atWrite) kill();
  });
  const timer = setTimeout(kill, delayMs);
  try {
    await process.exited();
  } finally {
    clearTimeout(timer);
    unsubscribe();
  }
}

async function run(context: ScenarioContext): Promise<ScenarioResult> {
  const size = SIZES[context.scale];
  const rng = new Rng(context.seed);
  const started = Date.now();
  const verdict = new Verdict();
  const namespace = 'storm';
  const users = new Set([CONTROLLER_USER]);
  const cluster = await startCluster();
  let controller: ControllerProcess | undefined;
  try {
    await api(cluster.admin).createNamespace(namespace);
    const names = Array.from({ length: size.schedules }, (_, i) => `storm-${i}`);
    await createSchedules(cluster, namespace, names);
    cluster.server.requestLog.clear();
    const killTimes: number[] = [];
    const earlier: RequestLogEntry[] = [];
    const moveAside = (): void => {
      earlier.push(...cluster.server.requestLog.entries());
      cluster.server.requestLog.clear();
    };
    const storm = Date.now();
    const minimal = 2 * size.schedules;
    /** Every request since the storm began: the lives moved aside and the current one. */
    const entriesSoFar = (): RequestLogEntry[] => [...earlier, ...cluster.server.requestLog.entries()];
    const landed = (): number => writesBy(entriesSoFar(), users).filter((w) => w.code < 300).length;
    for (let i = 0; i < size.kills; i++) {
      moveAside();
      controller = startController(context.bundle, cluster.controllerKubeconfig);
      // A start-up kill at a random moment (cut short by the first write); the others at a random write
      // (or after 5 s: once all is converged a life writes nothing, and the kill count falls short).
      // The last lives count as one at least (a fraction would inflate the share), and a life is killed
      // before the last write still to make: drawn past it, a life converged the reduced storm (80
      // schedules, seed 7) and its kill, after the 5 s, fell after the last convergence write.
      const writeLivesLeft = Math.max(1, (size.kills - i) * (1 - STARTUP_SHARE));
      const made = landed();
      const toMake = minimal - made;
      const share = Math.max(0, STORM_SHARE * minimal - made) / writeLivesLeft;
      if (rng.chance(STARTUP_SHARE)) await killAtWrite(cluster, CONTROLLER_USER, controller, 1, rng.int(20, 600));
      else await killAtWrite(cluster, CONTROLLER_USER, controller, rng.int(1, Math.max(1, Math.min(Math.floor(2 * share), toMake - 1))), 5_000);
      killTimes.push(Date.now());
      if (i % 20 === 19) context.log(`R1: ${i + 1} kills, ${writesBy(entriesSoFar(), users).length} writes so far`);
    }
    moveAside();
    controller = startController(context.bundle, cluster.controllerKubeconfig, ['--concurrency=4']);
    const expected = { namespace, schedules: new Map(names.map((n) => [n, { schedule: '0 2 * * *' }])) };
    const converged = await waitConverged(cluster.admin, expected, context.scale === 'full' ? 180_000 : 60_000);
    verdict.expectNone(converged.problems, 'not converged');
    const entries = entriesSoFar();
    const writes = writesBy(entries, users);
    const stormWrites = writes.filter((w) => Date.parse(w.time) <= (killTimes.at(-1) ?? 0)).length;
    const lastWrite = Math.max(...writes.map((w) => Date.parse(w.time)));
    const killsDuring = killTimes.filter((t) => t < lastWrite).length;
    verdict.expect(killsDuring >= size.kills, `only ${killsDuring} of ${size.kills} kills fell before the last convergence write`);
    verdict.expectNone(foreignWrites(entries, users, namespace), 'wrote to other objects');
    await settled(cluster.server, users);
    const idle = await idleWrites(cluster.server, users, size.idleMs);
    verdict.expect(idle.length === 0, `${idle.length} writes in the ${size.idleMs / 1000} s idle window: ${idle.slice(0, 3).map((w) => `${w.verb} ${w.resource} ${w.name}`).join(', ')}`);
    verdict.expect(controller.child.exitCode === null, 'the last controller exited');
    const events = writesBy(entries, users, { events: true }).length - writes.length;
    return finishRow(context, started, verdict, {
      id: 'R1',
      done: `${fmt(size.schedules)} new schedules, SIGKILL ×${size.kills} at random moments (${STARTUP_SHARE * 100} % in start-up, the rest at a random write of a life, the storm landing ${fmt(stormWrites)} writes), restart at once`,
      invariants: ['1 child each, controlled', 'Ready @ generation', 'no foreign writes', `0 writes in ${size.idleMs / 1000} s idle`],
      writes: writesFigure(writes.length, minimal),
      figures: {
        'kills during convergence': `${killsDuring}`,
        'storm start → converged': `${((lastWrite - storm) / 1000).toFixed(1)} s`,
        'Events written': fmt(events),
        'failed writes': fmt(writes.filter((w) => w.code >= 300).length),
      },
    });
  } finally {
    await controller?.stop();
    await cluster.stop();
  }
}

/** R1: the kill -9 storm. */
export const killStorm: Scenario = { id: 'R1', title: 'kill -9 storm', run };
