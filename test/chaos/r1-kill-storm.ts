/**
 * R1, kill -9 storm: N new BackupSchedules; the controller bundle (its own process, dist/ RBAC) is
 * SIGKILLed at random moments at least K times during convergence and restarted at once. Then: the
 * converged state (one child each, controlled by its schedule, Ready at its generation), no other
 * object touched, and no write at all in an idle window.
 */
import type { RequestLogEntry } from '../apiserver/index.ts';
import type { ControllerProcess } from '../e2e/harness.ts';
import { CONTROLLER_USER, sleep, startCluster, type Cluster } from '../e2e/harness.ts';
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
 * Kill moments: half of the kills fall uniformly in the start-up (LIST, cache sync, first reconciles),
 * the other half the moment the life's first write reaches the API server. Even so a writing life lands
 * ~20 writes (those already in flight on its connections when it dies: measured 20–33 at 1,000
 * schedules), so K lives must not be allowed more: 2N writes take ~2N / 20 writing lives, and with
 * K / 2 of them (50 for 1,000 schedules and 100 kills) convergence is still far from done at the K-th
 * kill. Later kill moments (a window of 15 ms after the first write, or the n-th write) let a fast
 * machine converge after 67–80 kills.
 */
const STARTUP_SHARE = 0.5;

/**
 * SIGKILLs `process` the moment its `n`-th write reaches the API server (a request-log listener, run
 * synchronously as the request arrives: polling the log would lag behind a burst, which holds this
 * process's event loop), and resolves once it is dead; or after 5 s without that many writes (once all
 * is converged a life writes nothing; the kill count then falls short).
 */
async function killAtWrite(cluster: Cluster, user: string, process: ControllerProcess, n: number): Promise<void> {
  let writes = 0;
  const unsubscribe = cluster.server.requestLog.onEntry((e) => {
    if (e.user === user && isWrite(e) && ++writes === n) process.child.kill('SIGKILL');
  });
  try {
    const deadline = Date.now() + 5_000;
    while (process.child.exitCode === null && process.child.signalCode === null && Date.now() < deadline) await sleep(5);
  } finally {
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
    for (let i = 0; i < size.kills; i++) {
      moveAside();
      controller = startController(context.bundle, cluster.controllerKubeconfig);
      if (rng.chance(STARTUP_SHARE)) await sleep(rng.int(20, 600));
      else {
        await killAtWrite(cluster, CONTROLLER_USER, controller, 1);
      }
      controller.child.kill('SIGKILL');
      await controller.exited();
      killTimes.push(Date.now());
      if (i % 20 === 19) context.log(`R1: ${i + 1} kills, ${writesBy([...earlier, ...cluster.server.requestLog.entries()], users).length} writes so far`);
    }
    moveAside();
    controller = startController(context.bundle, cluster.controllerKubeconfig, ['--concurrency=4']);
    const expected = { namespace, schedules: new Map(names.map((n) => [n, { schedule: '0 2 * * *' }])) };
    const converged = await waitConverged(cluster.admin, expected, context.scale === 'full' ? 180_000 : 60_000);
    verdict.expectNone(converged.problems, 'not converged');
    const entries = [...earlier, ...cluster.server.requestLog.entries()];
    const writes = writesBy(entries, users);
    const lastWrite = Math.max(...writes.map((w) => Date.parse(w.time)));
    const killsDuring = killTimes.filter((t) => t < lastWrite).length;
    verdict.expect(killsDuring >= size.kills, `only ${killsDuring} of ${size.kills} kills fell before the last convergence write`);
    verdict.expectNone(foreignWrites(entries, users, namespace), 'wrote to other objects');
    await settled(cluster.server, users);
    const idle = await idleWrites(cluster.server, users, size.idleMs);
    verdict.expect(idle.length === 0, `${idle.length} writes in the ${size.idleMs / 1000} s idle window: ${idle.slice(0, 3).map((w) => `${w.verb} ${w.resource} ${w.name}`).join(', ')}`);
    verdict.expect(controller.child.exitCode === null, 'the last controller exited');
    const minimal = 2 * size.schedules;
    const events = writesBy(entries, users, { events: true }).length - writes.length;
    return finishRow(context, started, verdict, {
      id: 'R1',
      done: `${fmt(size.schedules)} new schedules, SIGKILL ×${size.kills} at random moments (${STARTUP_SHARE * 100} % in start-up, the rest at a life's first write), restart at once`,
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
