/**
 * Runtime benchmark (`npm run bench:runtime`), the numbers issue 4 asks for:
 *
 * (a) watch events/s through decode → reflector → store → handler → rate-limiting queue → workers,
 *     from an in-process NDJSON stream (no network), and once through the test API server's HTTP watch;
 * (b) RSS of a child process (an esbuild bundle on this Node) caching N BackupSchedule-shaped and N
 *     CronJob-shaped objects, at N = 0, 10,000 and 20,000, and the marginal bytes per cached object.
 *
 * Options: `--events N` (default 200000), `--skip-http`, `--skip-rss`, `--rss-sizes 0,10000,20000` (the
 * objects per kind of each child run; the marginal bytes come from the last two).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { build } from 'esbuild';
import { KubeClient, KubeConfig, ResourceClient, decodeWatchStream, type KubeList, type KubeObject, type ListOptions, type WatchEvent, type WatchOptions } from '../src/kube/index.ts';
import { Informer, createRateLimitingQueue, type ListWatchSource } from '../src/runtime/index.ts';
import { startTestApiServer } from '../test/apiserver/index.ts';
import { ESM_REQUIRE_BANNER } from '../scripts/bundle.ts';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const EVENTS = Number(flag('--events') ?? '200000');
const KEYS = 20_000;
const RSS_SIZES = (flag('--rss-sizes') ?? '0,10000,20000').split(',').map(Number);
if (RSS_SIZES.some((n) => !Number.isInteger(n) || n < 0)) throw new Error(`--rss-sizes: expected non-negative integers separated by commas, got ${flag('--rss-sizes')}`);

/** A ~1.4 KB CronJob-like event line (incl. managedFields, which the reflector strips). */
function eventLine(i: number, type: 'ADDED' | 'MODIFIED'): string {
  const ns = `team-${i % 50}`;
  return JSON.stringify({
    type,
    object: {
      apiVersion: 'batch/v1', kind: 'CronJob',
      metadata: {
        name: `job-${i}`, namespace: ns, uid: `uid-${i}`, resourceVersion: String(1000 + i), generation: 1,
        labels: { 'app.kubernetes.io/managed-by': 'backupschedule-operator' },
        ownerReferences: [{ apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', name: `s-${i}`, uid: `owner-${i}`, controller: true }],
        managedFields: [{ manager: 'op', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:schedule': {}, 'f:jobTemplate': { 'f:spec': {} } } } }],
      },
      spec: {
        schedule: '0 2 * * *', concurrencyPolicy: 'Forbid',
        jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'backup', image: 'registry.k8s.io/etcd:3.5.15-0', args: [`snapshot save /backup/${ns}/${i}.db`], resources: { requests: { cpu: '100m', memory: '128Mi' } } }] } } } },
      },
    },
  });
}

/** An in-process source: empty LIST, then one WATCH that streams `events` lines as 64 KiB chunks. */
function syntheticSource(events: number): ListWatchSource<KubeObject> {
  const lines = Array.from({ length: KEYS }, (_, i) => Buffer.from(`${eventLine(i, 'ADDED')}\n`));
  const modified = Array.from({ length: KEYS }, (_, i) => Buffer.from(`${eventLine(i, 'MODIFIED')}\n`));
  async function* chunks(): AsyncGenerator<Buffer> {
    let batch: Buffer[] = [];
    let size = 0;
    for (let n = 0; n < events; n++) {
      const line = n < KEYS ? lines[n]! : modified[n % KEYS]!;
      batch.push(line);
      size += line.length;
      if (size >= 65_536) {
        yield Buffer.concat(batch, size);
        batch = [];
        size = 0;
      }
    }
    if (size) yield Buffer.concat(batch, size);
  }
  let watched = false;
  return {
    list: async (): Promise<KubeList<KubeObject>> => ({ metadata: { resourceVersion: '1' }, items: [] }),
    watch: (): AsyncIterable<WatchEvent<KubeObject>> => {
      if (watched) return { [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<WatchEvent<KubeObject>>>(() => {}) }) };
      watched = true;
      return decodeWatchStream<KubeObject>(chunks());
    },
  };
}

/** Runs informer → handler → queue → 4 workers until `expected` events were handled; returns events/s. */
async function pipeline(source: ListWatchSource<KubeObject>, expected: number): Promise<{ seconds: number; perSecond: number; perCpuSecond: number; reconciled: number }> {
  const queue = createRateLimitingQueue<string>({ name: 'bench' });
  const informer = new Informer<KubeObject>({ name: 'bench', source });
  let handled = 0;
  let reconciled = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const enqueue = (o: KubeObject): void => {
    queue.add(`${o.metadata.namespace}/${o.metadata.name}`);
    if (++handled === expected) resolveDone();
  };
  informer.addEventHandler({ onAdd: enqueue, onUpdate: (_old, o) => enqueue(o), onDelete: enqueue });
  const workers = Array.from({ length: 4 }, async () => {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      reconciled++;
      queue.done(key);
    }
  });
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  informer.start();
  await done;
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  await informer.stop();
  queue.shutDown();
  await Promise.all(workers);
  return { seconds, perSecond: Math.round(expected / seconds), perCpuSecond: Math.round(expected / cpuSeconds), reconciled };
}

async function httpWatch(): Promise<{ events: number; seconds: number; perSecond: number; perCpuSecond: number }> {
  const server = await startTestApiServer({ watchHistorySize: 50_000 });
  const kube = new KubeClient({ config: KubeConfig.fromKubeconfig(server.kubeconfig()) });
  const cms = new ResourceClient<KubeObject>(kube, { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true });
  try {
    const startRv = (await cms.list({ namespace: 'default', limit: 1 })).metadata.resourceVersion!;
    const count = 5_000;
    let next = 0;
    await Promise.all(Array.from({ length: 64 }, async () => {
      while (next < count) {
        const i = next++;
        await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'default', labels: { app: 'bench' } }, data: { payload: 'x'.repeat(600), index: String(i) } });
      }
    }));
    // The watch replays the retained history from `startRv`: every create arrives over HTTP.
    const source: ListWatchSource<KubeObject> = {
      list: async (_o: ListOptions) => ({ metadata: { resourceVersion: startRv }, items: [] }),
      watch: (o: WatchOptions) => cms.watch({ ...o, namespace: 'default' }),
    };
    const result = await pipeline(source, count);
    return { events: count, seconds: result.seconds, perSecond: result.perSecond, perCpuSecond: result.perCpuSecond };
  } finally {
    kube.close();
    await server.stop();
  }
}

interface RssRun { perKind: number; cached: number; rss: number; heapUsed: number; heapTotal: number; sampleJsonBytes: number; node: string }

/** Bundles the child with esbuild and runs it per configuration and size. */
async function rss(configs: readonly { readonly label: string; readonly env: Readonly<Record<string, string>> }[]): Promise<{ label: string; runs: RssRun[] }[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rss-bench-'));
  const outfile = join(dir, 'child.mjs');
  try {
    await build({
      entryPoints: [join(dirname(fileURLToPath(import.meta.url)), 'runtime-rss-child.ts')],
      bundle: true, platform: 'node', format: 'esm', target: 'node24', outfile, logLevel: 'error',
      // Loaded lazily for exec-plugin users only; the image bundle must keep it external too.
      external: ['@kubernetes/client-node'],
      banner: { js: ESM_REQUIRE_BANNER },
    });
    return configs.map(({ label, env }) => ({
      label,
      runs: RSS_SIZES.map((n) => JSON.parse(execFileSync(process.execPath, ['--expose-gc', outfile, String(n)], { encoding: 'utf8', env: { ...process.env, ...env } }).trim()) as RssRun),
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const MiB = 1024 * 1024;
console.log(`# runtime benchmark on Node ${process.version}, ${new Date().toISOString()}`);
const synthetic = await pipeline(syntheticSource(EVENTS), EVENTS);
console.log(`(a) in-process watch stream: ${EVENTS} events (${KEYS} keys, ~1.4 KB JSON each, managedFields stripped) in ${synthetic.seconds.toFixed(2)} s = ${synthetic.perSecond} events/s wall-clock, ${synthetic.perCpuSecond} events per CPU-second, through decode → reflector → store → handler → queue → 4 workers (${synthetic.reconciled} reconciles after dedup); target ≥ 20000; load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs`);
if (!args.includes('--skip-http')) {
  const http = await httpWatch();
  console.log(`(a) HTTP watch of the test API server (same process, replaying history): ${http.events} events in ${http.seconds.toFixed(2)} s = ${http.perSecond} events/s wall-clock, ${http.perCpuSecond} per CPU-second (server and client share this process)`);
}
if (!args.includes('--skip-rss')) {
  const results = await rss([
    { label: 'strip managedFields (default transform), plain full GC', env: {} },
    { label: 'strip managedFields + StringInterner, compactHeap() after sync', env: { RSS_TRANSFORM: 'intern', RSS_COMPACT: '1' } },
  ]);
  for (const { label, runs } of results) {
    console.log(`(b) ${label}:`);
    for (const r of runs) console.log(`    ${r.perKind} BackupSchedules + ${r.perKind} CronJobs (${r.cached} cached, ~${r.sampleJsonBytes} B JSON each before stripping): RSS ${(r.rss / MiB).toFixed(1)} MiB, heap used ${(r.heapUsed / MiB).toFixed(1)} MiB of ${(r.heapTotal / MiB).toFixed(1)} MiB [${r.node}]`);
    const [smaller, larger] = runs.slice(-2);
    if (smaller && larger && larger.cached > smaller.cached) {
      const extra = larger.cached - smaller.cached;
      console.log(`    marginal per extra cached object (${smaller.perKind}+${smaller.perKind} → ${larger.perKind}+${larger.perKind}): RSS ${Math.round((larger.rss - smaller.rss) / extra)} B, heap ${Math.round((larger.heapUsed - smaller.heapUsed) / extra)} B (targets: RSS ≤ 150 MiB at 10k+10k, ≤ 2048 B per object)`);
    }
  }
}
