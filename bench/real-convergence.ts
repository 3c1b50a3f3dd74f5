/**
 * `npm run bench:convergence -- --kubeconfig <admin kubeconfig>`: convergence against a REAL cluster
 * (issue 34), where the test API server's request log does not exist. Per run, in a fresh namespace:
 * N BackupSchedules created by the admin (32 in flight) while nothing runs; a token of dist/'s
 * ServiceAccount (TokenRequest, in a token file) so the controller runs with dist/'s RBAC; watches on
 * the namespace's BackupSchedules and CronJobs; then the side starts, and the run ends when the watch
 * has shown every schedule Ready with `observedGeneration` = `generation`.
 *
 * Sides: the controller bundle (the image's V8 flags, `--concurrency=C --namespace=<ns>
 * --log-level=info`, no leader election) and, with `--clientgo <binary>`, a reference client-go
 * controller (bench/clientgo-reference/, sample-controller pattern, the same child and status) for
 * the comparison. Rounds alternate which side goes first; figures are medians.
 *
 * Per run: time to all Ready (process start → last Ready seen), the span (first child seen → last
 * Ready), the initial sync (start → "starting workers" in the side's log), the writes by verb and
 * resource (the API server's own `apiserver_request_total`, before → 2 s after; cluster-wide, so the
 * previous run's namespace is deleted and gone first), peak RSS (VmHWM) and CPU at all Ready.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient, must } from '../test/conformance/harness.ts';
import { endpointFromKubeconfig } from '../test/conformance/harness/kubeconfig.ts';
import { parsePidStat } from '../test/chaos/machine-load.ts';
import { applyDocuments, buildBundle, clientFromKubeconfig, ControllerProcess, distDocuments, sleep, waitFor } from '../test/e2e/harness.ts';
import { peakRssBytes } from '../test/e2e/process-memory.ts';
import { countsSince, isWriteKey, requestCounts } from '../test/real/apiserver-requests.ts';
import { writeControllerKubeconfig } from '../test/real/controller-kubeconfig.ts';
import { scheduleManifest } from '../test/e2e/scenarios.ts';
import { median } from './stats.ts';

/** What `bench:convergence --kubeconfig` was asked. */
export interface RealConvergenceOptions {
  readonly kubeconfig: string;
  readonly sizes: readonly number[];
  readonly repeat: number;
  readonly concurrency: number;
  readonly controllerNodeFlags: readonly string[];
  /** The reference client-go controller's binary; without it only the bundle runs. */
  readonly clientgo?: string;
  readonly clientgoArgs: readonly string[];
  /** A shell command run before each run (e.g. a fresh etcd); the namespace is then not deleted. */
  readonly betweenRuns?: string;
}

type Side = 'bundle' | 'clientgo';

/** One run's figures. */
interface RunResult {
  readonly side: Side;
  readonly n: number;
  readonly readyMs: number;
  readonly spanMs: number;
  readonly syncedMs: number | undefined;
  readonly writes: Record<string, number>;
  readonly peakRssMiB: number;
  readonly cpuMs: number;
}

interface ScheduleLike {
  readonly metadata: { readonly name?: string; readonly generation?: number };
  readonly status?: { readonly observedGeneration?: number; readonly conditions?: readonly { type: string; status: string; observedGeneration?: number }[] };
}

const isReady = (o: ScheduleLike): boolean => {
  const ready = o.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && ready.observedGeneration === o.metadata.generation && o.status?.observedGeneration === o.metadata.generation;
};

/** Write requests by `VERB resource[/subresource] code` to the resources a side writes (all users). */
async function writeCounts(api: ApiClient): Promise<Map<string, number>> {
  const counts = await requestCounts(api, ['cronjobs', 'backupschedules', 'events']);
  return new Map([...counts].filter(([key]) => isWriteKey(key)));
}

/** When the side's log said its caches had synced ("starting workers", JSON lines of both sides). */
function syncedAt(lines: readonly string[]): number | undefined {
  for (const line of lines) {
    if (!line.includes('starting workers')) continue;
    try {
      const r = JSON.parse(line) as Record<string, unknown>;
      if (r['msg'] === 'starting workers') return Date.parse(String(r['time']));
    } catch {
      // not a JSON line
    }
  }
  return undefined;
}

/** Runs the benchmark; resolves to the exit code. */
export async function realConvergence(o: RealConvergenceOptions): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'bks-real-bench-'));
  const adminText = readFileSync(o.kubeconfig, 'utf8');
  let api = new ApiClient(endpointFromKubeconfig(o.kubeconfig));
  const sides: Side[] = o.clientgo === undefined ? ['bundle'] : ['bundle', 'clientgo'];

  const prepareCluster = async (): Promise<void> => {
    const admin = clientFromKubeconfig(adminText);
    try {
      await applyDocuments(admin, distDocuments());
    } finally {
      admin.close();
    }
    await waitFor('the BackupSchedule CRD to be served', async () => (await api.get('/apis/kubelings.dev/v1/backupschedules?limit=1')).status === 200, 60_000, 200);
  };

  const createSchedules = async (ns: string, n: number): Promise<void> => {
    must(await api.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }), 201);
    let next = 0;
    await Promise.all(Array.from({ length: 32 }, async () => {
      while (next < n) {
        const i = next++;
        must(await api.post(`/apis/kubelings.dev/v1/namespaces/${ns}/backupschedules`, scheduleManifest(ns, `backup-${i}`)), 201);
      }
    }));
  };

  // The namespace controller and the garbage collector delete its contents: wait, so none of that runs during the next measurement.
  const deleteNamespace = async (ns: string): Promise<void> => {
    await api.delete(`/api/v1/namespaces/${ns}`);
    await waitFor(`namespace ${ns} to be gone`, async () => (await api.get(`/api/v1/namespaces/${ns}`)).status === 404, 900_000, 1_000);
  };

  const startSide = (side: Side, kubeconfig: string, ns: string, bundle: string): { child: ChildProcess; lines: () => readonly string[]; stop: () => Promise<unknown> } => {
    if (side === 'bundle') {
      const p = ControllerProcess.start(bundle, ['--kubeconfig', kubeconfig, `--concurrency=${o.concurrency}`, `--namespace=${ns}`, '--log-level=info'], o.controllerNodeFlags);
      return { child: p.child, lines: () => p.lines, stop: () => p.stop() };
    }
    const child = spawn(o.clientgo as string, ['--kubeconfig', kubeconfig, `--namespace=${ns}`, `--workers=${o.concurrency}`, '--log-synced', ...o.clientgoArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    const collect = (c: Buffer): void => void lines.push(...c.toString('utf8').split('\n').filter((l) => l !== ''));
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    return {
      child,
      lines: () => lines,
      stop: async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      },
    };
  };

  const run = async (side: Side, n: number, round: number, bundle: string): Promise<RunResult> => {
    if (o.betweenRuns !== undefined) {
      const r = spawnSync('bash', ['-c', o.betweenRuns], { stdio: 'inherit' });
      if (r.status !== 0) throw new Error(`--between-runs exited with ${r.status}`);
      api.close();
      api = new ApiClient(endpointFromKubeconfig(o.kubeconfig));
      await prepareCluster();
    }
    const ns = `bench-${side}-${n}-${round < 0 ? 'warmup' : round}`;
    await createSchedules(ns, n);
    const kubeconfig = await writeControllerKubeconfig(api, adminText, dir);
    await sleep(2_000); // the creations settle (watch cache, etcd) before the clock starts
    const schedulesPath = `/apis/kubelings.dev/v1/namespaces/${ns}/backupschedules`;
    const cronJobsPath = `/apis/batch/v1/namespaces/${ns}/cronjobs`;
    const currentRv = async (path: string): Promise<string> => String((must(await api.get(`${path}?limit=1`), 200)['metadata'] as { resourceVersion: string }).resourceVersion);
    const scheduleWatch = api.watch(schedulesPath, { resourceVersion: await currentRv(schedulesPath) });
    const cronJobWatch = api.watch(cronJobsPath, { resourceVersion: await currentRv(cronJobsPath) });
    const before = await writeCounts(api);
    const startedAt = Date.now();
    const proc = startSide(side, kubeconfig, ns, bundle);
    try {
      let firstChildAt: number | undefined;
      void cronJobWatch.nextChange(900_000).then((ev) => {
        if (ev?.type === 'ADDED') firstChildAt = Date.now();
      }, () => undefined);
      const ready = new Set<string>();
      while (ready.size < n) {
        if (proc.child.exitCode !== null) throw new Error(`${side} exited: ${proc.lines().slice(-10).join('\n')}`);
        const ev = await scheduleWatch.nextChange(120_000);
        if (!ev) throw new Error('the BackupSchedule watch ended');
        const object = ev.object as unknown as ScheduleLike;
        if ((ev.type === 'ADDED' || ev.type === 'MODIFIED') && isReady(object)) ready.add(object.metadata.name ?? '');
      }
      const readyAt = Date.now();
      const pid = proc.child.pid ?? 0;
      const peakRssMiB = Math.round(peakRssBytes(pid) / 2 ** 20);
      // utime + stime in ticks of 10 ms.
      const cpuMs = (parsePidStat(readFileSync(`/proc/${pid}/stat`, 'utf8')) ?? Number.NaN) * 10;
      await sleep(2_000); // late writes (Events, duplicates) still count
      const writes = Object.fromEntries(countsSince(before, await writeCounts(api)));
      const synced = syncedAt(proc.lines());
      return { side, n, readyMs: readyAt - startedAt, spanMs: readyAt - (firstChildAt ?? startedAt), syncedMs: synced === undefined ? undefined : synced - startedAt, writes, peakRssMiB, cpuMs };
    } finally {
      scheduleWatch.close();
      cronJobWatch.close();
      await proc.stop();
      if (o.betweenRuns === undefined) await deleteNamespace(ns);
    }
  };

  try {
    await prepareCluster();
    const bundle = await buildBundle();
    // One discarded round of each side: the API server's caches, etcd and the page cache warm up.
    for (const side of sides) await run(side, Math.min(...o.sizes, 1_000), -1, bundle);
    const rows: string[] = [];
    for (const n of o.sizes) {
      const results: RunResult[] = [];
      for (let round = 0; round < o.repeat; round++) {
        for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
          const r = await run(side, n, round, bundle);
          results.push(r);
          process.stdout.write(`${JSON.stringify(r)}\n`);
        }
      }
      const of = (side: Side, pick: (r: RunResult) => number): number => median(results.filter((r) => r.side === side).map(pick));
      const figures = (side: Side): string =>
        `${side}: ready ${of(side, (r) => r.readyMs)} ms (span ${of(side, (r) => r.spanMs)}, sync ${of(side, (r) => r.syncedMs ?? Number.NaN)}), peak RSS ${of(side, (r) => r.peakRssMiB)} MiB, CPU ${of(side, (r) => r.cpuMs)} ms`;
      const ratio = (pick: (r: RunResult) => number): string => (of('bundle', pick) / of('clientgo', pick)).toFixed(2);
      rows.push(`N=${n}, medians of ${o.repeat}: ${sides.map(figures).join(' · ')}${o.clientgo === undefined ? '' : ` · bundle / client-go: ready ${ratio((r) => r.readyMs)}×, span ${ratio((r) => r.spanMs)}×, peak RSS ${ratio((r) => r.peakRssMiB)}×, CPU ${ratio((r) => r.cpuMs)}×`}`);
    }
    process.stdout.write(`\n${rows.join('\n')}\n`);
    return 0;
  } finally {
    api.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
