/**
 * R3, leader kills: three replicas with leader election on dist/'s Lease; K times the leader is
 * SIGKILLed (no release: its Lease must expire) and restarted at once under a new identity, while
 * schedules keep changing. Every process, restarts included, has a ServiceAccount of its own, so the
 * request log tells each one's writes apart. Figures: writes by non-leaders (from the request log, by
 * identity; must be 0), the longest time without a leader against lease duration + retry period, the
 * time from the dead leader's last renewal to the takeover (at least the lease duration: nobody took
 * an unexpired Lease), convergence after the last kill.
 */
import { CONTROLLER_SA, sleep, startCluster, waitFor, type ControllerProcess } from '../e2e/harness.ts';
import { api } from '../e2e/scenarios.ts';
import { createSchedules, LEADER_FLAGS, LEADER_TIMING, leaseHolder, replicaAccount, SCHEDULES, startController, type ReplicaAccount } from './chaos-cluster.ts';
import { foreignWrites, waitConverged, writesBy } from './invariants.ts';
import { nonLeaderWrites, takeovers, type LeaderKill } from './leadership.ts';
import { Rng } from './random.ts';
import { finishRow, fmt, Verdict, type Scenario, type ScenarioContext, type ScenarioResult } from './scenario.ts';

const SIZES = {
  full: { schedules: 200, kills: 20 },
  reduced: { schedules: 30, kills: 1 },
} as const;

const LEASE_S = LEADER_TIMING.leaseDurationMs / 1000;
const RETRY_S = LEADER_TIMING.retryPeriodMs / 1000;
const JITTER = LEADER_TIMING.jitterFactor;
/**
 * The worst takeover: a follower sees the last renewal up to one jittered retry period late, counts
 * the lease duration from then, and checks again only at its next jittered retry tick.
 */
const WORST_GAP_S = LEASE_S + 2 * RETRY_S * (1 + JITTER);

interface Replica {
  readonly name: string;
  /** This incarnation's own ServiceAccount. */
  account: ReplicaAccount;
  incarnation: number;
  process: ControllerProcess;
}

async function run(context: ScenarioContext): Promise<ScenarioResult> {
  const size = SIZES[context.scale];
  const rng = new Rng(context.seed);
  const started = Date.now();
  const verdict = new Verdict();
  const namespace = 'leaders';
  const cluster = await startCluster();
  const replicas: Replica[] = [];
  const stopChurn = new AbortController();
  const start = (r: { name: string; account: ReplicaAccount; incarnation: number }): ControllerProcess =>
    startController(context.bundle, r.account.kubeconfig, [...LEADER_FLAGS, `--leader-election-id=${r.name}-${r.incarnation}`]);
  try {
    for (const name of ['replica-a', 'replica-b', 'replica-c']) {
      const account = await replicaAccount(cluster, `${CONTROLLER_SA.name}-${name}`);
      const r = { name, account, incarnation: 0 };
      replicas.push({ ...r, process: start(r) });
    }
    // One ServiceAccount per restart, made before the kills so that a restart waits for nothing.
    const spares: ReplicaAccount[] = [];
    for (let i = 0; i < size.kills; i++) spares.push(await replicaAccount(cluster, `${CONTROLLER_SA.name}-restart-${i}`));
    const users = new Set([...replicas.map((r) => r.account.user), ...spares.map((a) => a.user)]);
    await api(cluster.admin).createNamespace(namespace);
    const expected = new Map<string, { schedule: string }>();
    const names = Array.from({ length: size.schedules }, (_, i) => `lead-${i}`);
    await createSchedules(cluster, namespace, names);
    for (const n of names) expected.set(n, { schedule: '0 2 * * *' });
    const first = await waitConverged(cluster.admin, { namespace, schedules: expected }, 60_000);
    verdict.expectNone(first.problems, 'not converged before the kills');

    // The users' changes: ~5 a second, edits of existing schedules and a few new ones.
    const churnRng = rng.fork(1);
    const k = api(cluster.admin);
    let changes = 0;
    const churn = (async () => {
      while (!stopChurn.signal.aborted) {
        await sleep(200);
        if (churnRng.chance(0.1)) {
          const name = `lead-${expected.size}`;
          await createSchedules(cluster, namespace, [name], 1);
          expected.set(name, { schedule: '0 2 * * *' });
        } else {
          const name = churnRng.pick([...expected.keys()]);
          const schedule = churnRng.pick(SCHEDULES.filter((s) => s !== expected.get(name)?.schedule));
          await k.schedules.patch({ namespace, name }, { spec: { schedule } }, { type: 'merge' });
          expected.set(name, { schedule });
        }
        changes++;
      }
    })();

    const killRng = rng.fork(2);
    const kills: LeaderKill[] = [];
    for (let i = 0; i < size.kills; i++) {
      const holder = await waitFor('a leader', async () => {
        const h = await leaseHolder(cluster);
        return h && replicas.some((r) => `${r.name}-${r.incarnation}` === h) ? h : undefined;
      }, 60_000, 100).catch(async () => undefined);
      if (holder === undefined) {
        const states = replicas.map((r) => `${r.name}-${r.incarnation} ${r.process.child.exitCode === null ? 'running' : `exited ${r.process.child.exitCode}`}: ${r.process.lines.slice(-2).join(' ')}`);
        verdict.expect(false, `no live replica held the Lease for 60 s before kill ${i + 1} (holder ${await leaseHolder(cluster).catch(() => '?')}): ${states.join(' | ')}`);
        break;
      }
      await sleep(killRng.int(1_000, 4_000));
      const victim = replicas.find((r) => `${r.name}-${r.incarnation}` === holder) as Replica;
      victim.process.child.kill('SIGKILL');
      kills.push({ atMs: Date.now(), user: victim.account.user });
      await victim.process.exited();
      victim.incarnation++;
      victim.account = spares[i] as ReplicaAccount;
      victim.process = start(victim);
      await waitFor(`a new leader after kill ${i + 1}`, async () => {
        const h = await leaseHolder(cluster);
        return h !== undefined && h !== holder;
      }, 60_000, 100).catch(() => undefined);
      context.log(`R3: kill ${i + 1}/${size.kills} of ${holder}; ${changes} changes so far`);
    }
    stopChurn.abort();
    await churn;
    const lastKill = kills.at(-1)?.atMs ?? Date.now();
    const converged = await waitConverged(cluster.admin, { namespace, schedules: expected }, 90_000);
    verdict.expectNone(converged.problems, 'not converged after the last kill');
    // Polled every 500 ms: the figure is at most that late.
    const convergedAfterS = (Date.now() - lastKill) / 1000;

    const entries = cluster.server.requestLog.entries();
    const rogue = nonLeaderWrites(entries, users);
    verdict.expect(rogue.length === 0, `${rogue.length} writes by non-leaders: ${rogue.slice(0, 3).map((w) => `${w.user} ${w.verb} ${w.resource} ${w.name} at ${w.time}`).join('; ')}`);
    const taken = takeovers(entries, users, kills);
    const missing = taken.filter((t) => t === undefined).length;
    verdict.expect(missing === 0, `${missing} kills with no takeover`);
    const done = taken.filter((t) => t !== undefined);
    const longest = Math.max(0, ...done.map((t) => t.afterKillMs)) / 1000;
    verdict.expect(longest <= WORST_GAP_S, `longest time without a leader ${longest.toFixed(1)} s > ${WORST_GAP_S} s`);
    // The follower counts the lease duration from when it saw the last renewal, which is after the renewal.
    const earliest = Math.min(...done.map((t) => t.afterLastRenewalMs)) / 1000;
    verdict.expect(earliest >= LEASE_S, `a Lease taken ${earliest.toFixed(1)} s after its holder's last renewal, before its ${LEASE_S} s expired`);
    verdict.expectNone(foreignWrites(entries, users, namespace), 'wrote to other objects');
    const exited = replicas.filter((r) => r.process.child.exitCode !== null || r.process.child.signalCode !== null);
    verdict.expect(exited.length === 0, `replicas exited: ${exited.map((r) => r.name).join(', ')}`);
    const mean = done.reduce((s, t) => s + t.afterKillMs, 0) / Math.max(done.length, 1) / 1000;
    return finishRow(context, started, verdict, {
      id: 'R3',
      done: `3 replicas, leader SIGKILLed ×${size.kills} (Lease left to expire), restarted at once; ${fmt(changes)} schedule changes meanwhile (${fmt(expected.size)} schedules)`,
      invariants: ['0 writes by non-leaders (each process its own identity)', `no leader ≤ ${WORST_GAP_S} s`, `takeover ≥ ${LEASE_S} s after the last renewal`, 'converged after the last kill', 'no foreign writes', 'no replica exited by itself'],
      writes: `${fmt(writesBy(entries, users).length)} (non-leader: ${rogue.length})`,
      figures: {
        'longest without a leader': `${longest.toFixed(1)} s (mean ${mean.toFixed(1)} s; lease + retry = ${LEASE_S + RETRY_S} s)`,
        'last renewal → takeover, shortest': `${earliest.toFixed(1)} s (lease ${LEASE_S} s)`,
        'last kill → converged': `${convergedAfterS.toFixed(1)} s`,
      },
    });
  } finally {
    stopChurn.abort();
    await Promise.all(replicas.map((r) => r.process.stop()));
    await cluster.stop();
  }
}

/** R3: leader kills. */
export const leaderKills: Scenario = { id: 'R3', title: 'leader kills', run };
