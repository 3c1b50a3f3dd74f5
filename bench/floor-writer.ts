/**
 * The floor of the convergence benchmark: the controller's own client (src/kube) issuing exactly the 2N
 * writes convergence needs — for each BackupSchedule in a namespace, create its CronJob (buildCronJob,
 * the same object the controller sends), then PUT its status (computeStatus, the same status) — back to
 * back, with as many in flight as the controller has workers. No caches, no watches, no queue.
 *
 * With --informers it also runs what every controller runs, and nothing more: an informer of each kind
 * (src/runtime, the controller's own, caching with its default transform), synced before the first
 * write, as the stand-in for issue 10's reference (a client-go controller: shared informers, a work
 * queue, 4 workers), whose API server also streams every write to its watches.
 *
 *   tsx bench/floor-writer.ts --kubeconfig <file> --namespace <ns> --concurrency <n> [--informers] [--backup-image <img>]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { buildCronJob } from '../src/pure/index.ts';
import { computeStatus } from '../src/pure/status.ts';
import { BACKUP_SCHEDULES, CRON_JOBS, type BackupScheduleObject } from '../src/controller/resources.ts';
import { KubeClient } from '../src/kube/kube-client.ts';
import { KubeConfig } from '../src/kube/kube-config.ts';
import type { KubeObject } from '../src/kube/object.ts';
import { ResourceClient } from '../src/kube/resource-client.ts';
import { Informer } from '../src/runtime/informer.ts';
import { listAllPages } from '../src/runtime/list-watch-source.ts';

const { values } = parseArgs({ options: { kubeconfig: { type: 'string' }, namespace: { type: 'string' }, concurrency: { type: 'string' }, 'backup-image': { type: 'string' }, informers: { type: 'boolean' } } });
if (!values.kubeconfig || !values.namespace) throw new Error('floor-writer: --kubeconfig and --namespace are required');
const client = new KubeClient({ config: KubeConfig.fromKubeconfigFile(values.kubeconfig) });
const schedules = new ResourceClient<BackupScheduleObject>(client, BACKUP_SCHEDULES);
const cronJobs = new ResourceClient<KubeObject>(client, CRON_JOBS);
const image = values['backup-image'];
const namespace = values.namespace;

const informers = values.informers
  ? { schedules: new Informer({ name: 'backupschedules', source: schedules, namespace }), cronJobs: new Informer({ name: 'cronjobs', source: cronJobs, namespace }) }
  : undefined;
let items: BackupScheduleObject[];
if (informers) {
  informers.schedules.start();
  informers.cronJobs.start();
  while (!informers.schedules.hasSynced() || !informers.cronJobs.hasSynced()) await sleep(10);
  items = informers.schedules.store.list();
} else {
  items = (await listAllPages(schedules, { pageSize: 500, namespace, transform: (o) => o })).items;
}

const started = performance.now();
const cpuBefore = process.cpuUsage();
let next = 0;
const worker = async (): Promise<void> => {
  while (next < items.length) {
    const schedule = items[next++]!;
    const child = (await cronJobs.create(buildCronJob(schedule, image ? { image } : {}) as KubeObject));
    await schedules.updateStatus({ ...schedule, status: computeStatus(schedule, child, { kind: 'InSync' }, Date.now()) });
  }
};
await Promise.all(Array.from({ length: Number(values.concurrency ?? '4') }, worker));
const cpu = process.cpuUsage(cpuBefore);
await Promise.all([informers?.schedules.stop(), informers?.cronJobs.stop()]);
process.stdout.write(`${JSON.stringify({ objects: items.length, writes: 2 * items.length, ms: Math.round(performance.now() - started), cpuMs: Math.round((cpu.user + cpu.system) / 1000) })}\n`);
client.close();
