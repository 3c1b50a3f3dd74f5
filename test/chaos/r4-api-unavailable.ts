/**
 * R4, API unavailable: two replicas with leader election, started with dist/'s Deployment flags,
 * reach the API server through a TCP proxy. The server is paused (requests hang) for a while, later
 * the proxy refuses connections for as long (while users, who reach the server directly, go on making
 * changes). During each outage both replicas' /readyz must fail, and the leader, unable to renew for
 * longer than its renew deadline, must give up the Lease, pause its workers and campaign again rather
 * than exit; afterwards a replica leads again and work resumes by itself: the changes made during and
 * after the outage converge, nothing is lost or duplicated, no replica exits, no write comes from a
 * non-leader.
 */
import { CONTROLLER_SA, deploymentArgs, sleep, startCluster, waitFor, type Cluster, type ControllerProcess } from '../e2e/harness.ts';
import { api } from '../e2e/scenarios.ts';
import { createSchedules, LEADER_TIMING, readyz, replicaAccount, SCHEDULES, startController } from './chaos-cluster.ts';
import { foreignWrites, waitConverged, writesBy } from './invariants.ts';
import { nonLeaderWrites } from './leadership.ts';
import { Rng } from './random.ts';
import { finishRow, fmt, Verdict, type Scenario, type ScenarioContext, type ScenarioResult } from './scenario.ts';
import { TcpProxy } from './tcp-proxy.ts';

const SIZES = {
  full: { schedules: 100, outageMs: 30_000, changes: 40 },
  // Every outage outlasts the renew deadline (RENEW_DEADLINE_MS), so that the leader loses the Lease in the reduced run too.
  reduced: { schedules: 20, outageMs: 14_000, changes: 10 },
} as const;

/** What an outage must outlast for the leader to lose its Lease (every size's does). */
const RENEW_DEADLINE_MS = LEADER_TIMING.renewDeadlineMs;

/** The log lines of a leader giving up the Lease, and of a replica starting to lead. */
const LOST_LEASE = 'leader election lost; pausing workers and campaigning again';
const BECAME_LEADER = 'became leader; starting workers';

/** When (epoch ms) each of `replicas` logged `message` between `from` and `to`. */
function logged(replicas: readonly ControllerProcess[], message: string, from: number, to = Number.POSITIVE_INFINITY): number[] {
  return replicas.flatMap((r) => r.records().filter((l) => l['msg'] === message).map((l) => Date.parse(String(l['time'])))).filter((t) => t >= from && t <= to);
}

interface Outage {
  readonly kind: 'hang' | 'refuse';
  /** Per replica: seconds from the outage's start to the first failing /readyz, undefined if none. */
  readonly notReadyAfterS: (number | undefined)[];
  /** Seconds from the outage's end until both replicas were ready again. */
  readonly readyAgainS: number;
  /** Seconds from the outage's end until the changes made during and after it converged. */
  readonly resumedS: number;
  /** Seconds from the outage's start to each replica's giving up of the Lease during it. */
  readonly lostLeaseAfterS: number[];
  /** Seconds from the outage's end until a replica led again, undefined if none did. */
  readonly ledAgainS: number | undefined;
}

/**
 * One outage of `ms`. `changes` makes users' changes and returns the expected state: halfway through a
 * refused-connections outage (users reach the server directly; a paused server would hang them) and
 * after each outage.
 */
async function outage(cluster: Cluster, proxy: TcpProxy, replicas: readonly ControllerProcess[], kind: Outage['kind'], ms: number, changes: () => Promise<Map<string, { schedule: string }>>, namespace: string): Promise<Outage & { problems: string[] }> {
  const start = Date.now();
  if (kind === 'hang') cluster.server.pause();
  else await proxy.refuse();
  const notReady: (number | undefined)[] = replicas.map(() => undefined);
  let changedDuring = kind === 'hang';
  while (Date.now() - start < ms) {
    if (!changedDuring && Date.now() - start >= ms / 2) {
      changedDuring = true;
      await changes();
    }
    const codes = await Promise.all(replicas.map((r) => readyz(r)));
    codes.forEach((code, i) => {
      if (code !== 200 && notReady[i] === undefined) notReady[i] = (Date.now() - start) / 1000;
    });
    await sleep(500);
  }
  if (kind === 'hang') cluster.server.resume();
  else await proxy.accept();
  const end = Date.now();
  const expected = await changes();
  const converged = await waitConverged(cluster.admin, { namespace, schedules: expected }, 90_000);
  const resumedS = (Date.now() - end) / 1000;
  await waitFor('both replicas ready again', async () => (await Promise.all(replicas.map((r) => readyz(r)))).every((c) => c === 200), 60_000, 250).catch(() => undefined);
  const lostLeaseAfterS = logged(replicas, LOST_LEASE, start, end).map((t) => (t - start) / 1000);
  const ledAgain = logged(replicas, BECAME_LEADER, end)[0];
  return { kind, notReadyAfterS: notReady, readyAgainS: (Date.now() - end) / 1000, resumedS, lostLeaseAfterS, ledAgainS: ledAgain === undefined ? undefined : (ledAgain - end) / 1000, problems: converged.problems };
}

async function run(context: ScenarioContext): Promise<ScenarioResult> {
  const size = SIZES[context.scale];
  const rng = new Rng(context.seed);
  const started = Date.now();
  const verdict = new Verdict();
  const namespace = 'outage';
  const cluster = await startCluster();
  const proxy = await TcpProxy.start(cluster.server.httpsUrl);
  const replicas: ControllerProcess[] = [];
  try {
    const accounts = [];
    for (const name of ['replica-a', 'replica-b']) accounts.push(await replicaAccount(cluster, `${CONTROLLER_SA.name}-${name}`, proxy.httpsUrl));
    const args = deploymentArgs();
    accounts.forEach((a, i) => replicas.push(startController(context.bundle, a.kubeconfig, [...args, `--leader-election-id=replica-${i}`])));
    const users = new Set(accounts.map((a) => a.user));
    const k = api(cluster.admin);
    await k.createNamespace(namespace);
    const expected = new Map<string, { schedule: string }>();
    const add = async (count: number): Promise<void> => {
      const names = Array.from({ length: count }, (_, i) => `out-${expected.size + i}`);
      await createSchedules(cluster, namespace, names);
      for (const n of names) expected.set(n, { schedule: '0 2 * * *' });
    };
    const edit = async (count: number): Promise<void> => {
      for (const name of rng.shuffle([...expected.keys()]).slice(0, count)) {
        const schedule = rng.pick(SCHEDULES.filter((s) => s !== expected.get(name)?.schedule));
        await k.schedules.patch({ namespace, name }, { spec: { schedule } }, { type: 'merge' });
        expected.set(name, { schedule });
      }
    };
    await add(size.schedules);
    const first = await waitConverged(cluster.admin, { namespace, schedules: expected }, 60_000);
    verdict.expectNone(first.problems, 'not converged before the outages');
    await waitFor('both replicas ready', async () => (await Promise.all(replicas.map((r) => readyz(r)))).every((c) => c === 200), 30_000, 250).catch(() => undefined);
    const changes = async (): Promise<Map<string, { schedule: string }>> => {
      await add(size.changes / 2);
      await edit(size.changes / 2);
      return expected;
    };
    const outages: Outage[] = [];
    for (const kind of ['hang', 'refuse'] as const) {
      context.log(`R4: API ${kind === 'hang' ? 'paused (requests hang)' : 'refusing connections'} for ${size.outageMs / 1000} s`);
      const o = await outage(cluster, proxy, replicas, kind, size.outageMs, changes, namespace);
      verdict.expectNone(o.problems, `not converged after the ${kind} outage`);
      o.notReadyAfterS.forEach((s, i) => verdict.expect(s !== undefined, `replica ${i} kept /readyz at 200 while the API ${kind === 'hang' ? 'hung' : 'refused connections'}`));
      verdict.expect(o.readyAgainS < 60, `a replica stayed not ready after the ${kind} outage`);
      verdict.expect(o.lostLeaseAfterS.length > 0, `no replica gave up the Lease (paused its workers) during the ${size.outageMs / 1000} s ${kind} outage (renew deadline ${RENEW_DEADLINE_MS / 1000} s)`);
      verdict.expect(o.ledAgainS !== undefined, `no replica led again after the ${kind} outage`);
      outages.push(o);
    }
    const exited = replicas.filter((r) => r.child.exitCode !== null || r.child.signalCode !== null);
    verdict.expect(exited.length === 0, `${exited.length} replicas exited: ${exited.map((r) => r.lines.slice(-3).join(' ')).join(' | ')}`);
    const entries = cluster.server.requestLog.entries();
    const rogue = nonLeaderWrites(entries, users);
    verdict.expect(rogue.length === 0, `${rogue.length} writes by non-leaders`);
    verdict.expectNone(foreignWrites(entries, users, namespace), 'wrote to other objects');
    const figure = (o: Outage): string =>
      `not ready after ${o.notReadyAfterS.map((s) => (s === undefined ? 'never' : `${s.toFixed(1)} s`)).join(' / ')}; Lease given up after ${o.lostLeaseAfterS.map((s) => `${s.toFixed(1)} s`).join(' / ') || 'never'}; ` +
      `a replica led again ${o.ledAgainS === undefined ? 'never' : `${o.ledAgainS.toFixed(1)} s after it ended`}; ready again ${o.readyAgainS.toFixed(1)} s and changes converged ${o.resumedS.toFixed(1)} s after it ended`;
    return finishRow(context, started, verdict, {
      id: 'R4',
      done: `2 replicas (dist/ flags, leader election); API paused ${size.outageMs / 1000} s, then refusing connections ${size.outageMs / 1000} s; ${size.changes} changes after each, and ${size.changes} more during the refused connections`,
      invariants: ['/readyz fails during each outage', 'the leader gives up the Lease and pauses, a replica leads again after', 'work resumes by itself', 'exact expected state (nothing lost or duplicated)', 'no replica exited', '0 writes by non-leaders'],
      writes: `${fmt(writesBy(entries, users).length)} (non-leader: ${rogue.length})`,
      figures: Object.fromEntries(outages.map((o) => [o.kind === 'hang' ? 'paused' : 'refused', figure(o)])),
    });
  } finally {
    cluster.server.resume();
    await Promise.all(replicas.map((r) => r.stop()));
    await proxy.stop();
    await cluster.stop();
  }
}

/** R4: API unavailable. */
export const apiUnavailable: Scenario = { id: 'R4', title: 'API unavailable', run };
