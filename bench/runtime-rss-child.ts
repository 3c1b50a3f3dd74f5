/**
 * Child process of `bench/runtime-bench.ts` (run as an esbuild bundle): caches N BackupSchedule-shaped
 * and N CronJob-shaped objects through two informers fed by an in-process LIST source (pages of JSON
 * text, parsed like an HTTP answer), then prints its memory as one JSON line.
 *
 * Usage: node --expose-gc runtime-rss-child.mjs <objectsPerKind>
 * Env: RSS_TRANSFORM=intern (also share repeated strings), RSS_COMPACT=1 (compactHeap after sync),
 * RSS_SETTLE_MS (idle time before measuring, default 2000), RSS_SMAPS=1 (print the largest mappings).
 */
import type { KubeList, KubeObject } from '../src/kube/object.ts';
import type { ListOptions } from '../src/kube/resource-client.ts';
import { Informer, RuntimeMetrics, StringInterner, compactHeap, stripManagedFields, createLogger, createRateLimitingQueue, type ListWatchSource } from '../src/runtime/index.ts';
import { KubeClient, KubeConfig } from '../src/kube/index.ts';

const perKind = Number(process.argv[2] ?? '10000');

const managedFields = (manager: string, i: number): unknown[] => [
  { manager, operation: 'Update', apiVersion: 'v1', time: `2026-11-30T00:${String(i % 60).padStart(2, '0')}:00Z`, fieldsType: 'FieldsV1',
    fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app.kubernetes.io/name': {}, 'f:team': {} }, 'f:ownerReferences': { '.': {}, [`k:{"uid":"${i}"}`]: {} } },
      'f:spec': { '.': {}, 'f:schedule': {}, 'f:timeZone': {}, 'f:concurrencyPolicy': {}, 'f:jobTemplate': { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"backup"}': { '.': {}, 'f:image': {}, 'f:args': {}, 'f:resources': {} } } } } } } } } },
  { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', subresource: 'status', time: '2026-11-30T02:00:01Z', fieldsType: 'FieldsV1',
    fieldsV1: { 'f:status': { 'f:lastScheduleTime': {}, 'f:lastSuccessfulTime': {}, 'f:conditions': { '.': {}, 'k:{"type":"Ready"}': { '.': {}, 'f:status': {}, 'f:type': {} } } } } },
];

function uid(kind: number, i: number): string {
  const hex = (kind * 1_000_000 + i).toString(16).padStart(12, '0');
  return `4c83db7e-1178-48fb-b88b-${hex}`;
}

function backupSchedule(i: number): KubeObject {
  const ns = `team-${i % 50}`;
  return {
    apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule',
    metadata: {
      creationTimestamp: '2026-11-29T10:00:00Z', generation: 3, labels: { 'app.kubernetes.io/name': 'etcd-backup', team: ns },
      managedFields: managedFields('kubectl-client-side-apply', i), name: `nightly-etcd-${i}`, namespace: ns, resourceVersion: String(100_000 + i), uid: uid(1, i),
    },
    spec: {
      schedule: '0 2 * * *', timeZone: 'Europe/Berlin', suspend: false, concurrencyPolicy: 'Forbid',
      source: { etcd: { endpoints: [`https://etcd-${i % 3}.${ns}.svc:2379`, `https://etcd-${(i + 1) % 3}.${ns}.svc:2379`], tlsSecretName: `etcd-client-tls-${i % 10}` } },
      destination: { persistentVolumeClaim: { claimName: `backups-${i % 20}`, path: `/etcd/${ns}/nightly-etcd-${i}` } },
      retention: { keepLast: 7 }, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1, backoffLimit: 2,
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
    },
    status: {
      observedGeneration: 3, cronJobName: `nightly-etcd-${i}-backup`, lastScheduleTime: '2026-11-30T01:00:00Z', lastSuccessfulTime: '2026-11-30T01:00:42Z', active: 0,
      conditions: [{ type: 'Ready', status: 'True', reason: 'CronJobReady', message: 'CronJob is up to date', observedGeneration: 3, lastTransitionTime: '2026-11-29T10:00:05Z' }],
    },
  };
}

function cronJob(i: number): KubeObject {
  const ns = `team-${i % 50}`;
  return {
    apiVersion: 'batch/v1', kind: 'CronJob',
    metadata: {
      name: `nightly-etcd-${i}-backup`, namespace: ns, uid: uid(2, i), resourceVersion: String(200_000 + i), generation: 1, creationTimestamp: '2026-11-29T10:00:01Z',
      labels: { 'app.kubernetes.io/managed-by': 'backupschedule-operator', 'kubelings.dev/backupschedule': `nightly-etcd-${i}` },
      ownerReferences: [{ apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', name: `nightly-etcd-${i}`, uid: uid(1, i), controller: true, blockOwnerDeletion: true }],
      managedFields: managedFields('backupschedule-operator', i),
    },
    spec: {
      schedule: '0 2 * * *', timeZone: 'Europe/Berlin', concurrencyPolicy: 'Forbid', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1,
      jobTemplate: { metadata: { labels: { 'kubelings.dev/backupschedule': `nightly-etcd-${i}` } }, spec: { backoffLimit: 2, template: { metadata: {}, spec: {
        restartPolicy: 'Never', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler', securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [{
          name: 'backup', image: 'registry.k8s.io/etcd:3.5.15-0', imagePullPolicy: 'IfNotPresent', command: ['/bin/sh', '-c'],
          args: [`etcdctl snapshot save /backup/${ns}/snapshot-$(date +%s).db --endpoints=https://etcd-${i % 3}.${ns}.svc:2379`],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
          volumeMounts: [{ name: 'backup', mountPath: '/backup' }, { name: 'etcd-tls', mountPath: '/etc/etcd/tls', readOnly: true }],
          terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File',
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        }],
        volumes: [{ name: 'backup', persistentVolumeClaim: { claimName: `backups-${i % 20}` } }, { name: 'etcd-tls', secret: { secretName: `etcd-client-tls-${i % 10}`, defaultMode: 420 } }],
      } } } },
    },
    status: { lastScheduleTime: '2026-11-30T01:00:00Z', lastSuccessfulTime: '2026-11-30T01:00:42Z' },
  };
}

/** Serves pages of JSON text, parsed per call as the HTTP client would. */
function pagedSource(make: (i: number) => KubeObject, count: number): ListWatchSource<KubeObject> {
  const pageSize = 500;
  return {
    async list(options: ListOptions): Promise<KubeList<KubeObject>> {
      const start = Number(options.continue ?? '0');
      const end = Math.min(count, start + (options.limit ?? pageSize));
      const items = Array.from({ length: end - start }, (_, k) => make(start + k));
      const text = JSON.stringify({ metadata: { resourceVersion: '999999', ...(end < count ? { continue: String(end) } : {}) }, items });
      return JSON.parse(text) as KubeList<KubeObject>;
    },
    watch: () => ({ [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<never>>(() => {}) }) }),
  };
}

const sampleBytes = (Buffer.byteLength(JSON.stringify(backupSchedule(1))) + Buffer.byteLength(JSON.stringify(cronJob(1)))) / 2;
// What the real process holds besides the caches: metrics registry, logger, a REST client, a queue.
const metrics = new RuntimeMetrics();
const logger = createLogger({ level: 'warn' });
const client = new KubeClient({ config: new KubeConfig({ server: 'https://127.0.0.1:6443' }), onRequest: metrics.restClientObserver });
const queue = createRateLimitingQueue<string>({ name: 'backupschedule', metrics: metrics.workQueue });
// RSS_TRANSFORM=intern: strip managedFields and share repeated string values (StringInterner).
const interner = new StringInterner();
const transform = process.env['RSS_TRANSFORM'] === 'intern' ? (o: KubeObject) => interner.internDeep(stripManagedFields(o)) : stripManagedFields;
const informers = [
  new Informer<KubeObject>({ name: 'backupschedules', source: pagedSource(backupSchedule, perKind), logger, transform }),
  new Informer<KubeObject>({ name: 'cronjobs', source: pagedSource(cronJob, perKind), logger, transform }),
];
for (const informer of informers) {
  informer.addEventHandler({ onAdd: (o) => queue.add(`${o.metadata.namespace}/${o.metadata.name}`) });
  informer.start();
}
while (!informers.every((i) => i.hasSynced())) await new Promise((r) => setTimeout(r, 5));
// Drain the queue as workers would.
for (let key = queue.len() > 0 ? await queue.get() : undefined; key !== undefined; key = queue.len() > 0 ? await queue.get() : undefined) queue.done(key);
// RSS_COMPACT=1: what a controller started with --expose-gc does after its caches synced
// (compactHeap); otherwise a plain full GC. Then a short idle period before measuring.
const settleMs = Number(process.env['RSS_SETTLE_MS'] ?? '2000');
if (process.env['RSS_COMPACT'] === '1') compactHeap();
else (globalThis as { gc?: () => void }).gc?.();
await new Promise((r) => setTimeout(r, settleMs));
if (process.env['RSS_SMAPS']) {
  const { readFileSync } = await import('node:fs');
  const maps = readFileSync('/proc/self/smaps', 'utf8').split('\n');
  const sizes: [string, number][] = [];
  let current = '';
  for (const line of maps) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) current = line.split(/\s+/).slice(5).join(' ') || `anon ${line.split(' ')[0]}`;
    else if (line.startsWith('Rss:')) sizes.push([current, Number(line.split(/\s+/)[1])]);
  }
  const anon = sizes.filter(([n]) => n.startsWith('anon'));
  process.stderr.write(`anon mappings: ${anon.length}, ${anon.reduce((t, [, kb]) => t + kb, 0)} kB; all: ${sizes.reduce((t, [, kb]) => t + kb, 0)} kB\n`);
  const hist = new Map<number, number>();
  for (const [, kb] of anon) hist.set(kb, (hist.get(kb) ?? 0) + 1);
  process.stderr.write([...hist].sort((a, b) => b[0] * b[1] - a[0] * a[1]).slice(0, 8).map(([kb, n]) => `${n}×${kb}kB`).join(' ') + '\n');
  sizes.sort((a, b) => b[1] - a[1]);
  process.stderr.write(sizes.slice(0, 12).map(([n, kb]) => `${kb} kB ${n}`).join('\n') + '\n');
}
// Pages V8 gave back with madvise(MADV_FREE) stay in RSS (as LazyFree) until the kernel needs them.
let lazyFree = 0;
try {
  const { readFileSync } = await import('node:fs');
  const m = /^LazyFree:\s+(\d+) kB/m.exec(readFileSync('/proc/self/smaps_rollup', 'utf8'));
  lazyFree = m ? Number(m[1]) * 1024 : 0;
} catch {
  // not Linux
}
const mem = process.memoryUsage();
const cached = informers.reduce((n, i) => n + i.store.size, 0);
process.stdout.write(`${JSON.stringify({ perKind, cached, rss: mem.rss, lazyFree, heapUsed: mem.heapUsed, heapTotal: mem.heapTotal, external: mem.external, sampleJsonBytes: Math.round(sampleBytes), node: process.version })}\n`);
await Promise.all(informers.map((i) => i.stop()));
queue.shutDown();
client.close();
process.exit(0);
