/**
 * The floor of the convergence benchmark: the controller's own client (src/kube) issuing exactly the 2N
 * writes convergence needs — for each BackupSchedule in a namespace, create its CronJob (buildCronJob,
 * the same object the controller sends), then PUT its status (computeStatus, the same status) — back to
 * back, with as many in flight as the controller has workers. No caches, no watches, no queue.
 *
 * With --informers it also does what the informers of any controller do, and nothing more: it watches
 * both kinds from their LISTs' resourceVersions and keeps every object an event carries in a map, as
 * the stand-in for issue 10's reference (a client-go controller: shared informers, a work queue, 4
 * workers), whose API server also streams every write to its watches.
 *
 *   tsx bench/floor-writer.ts --kubeconfig <file> --namespace <ns> --concurrency <n> [--informers] [--backup-image <img>]
 */
import { parseArgs } from 'node:util';
import { buildCronJob } from '../src/pure/index.ts';
import { computeStatus } from '../src/pure/status.ts';
import { BACKUP_SCHEDULES, CRON_JOBS, type BackupScheduleObject } from '../src/controller/resources.ts';
import { KubeClient } from '../src/kube/kube-client.ts';
import { KubeConfig } from '../src/kube/kube-config.ts';
import type { KubeObject } from '../src/kube/object.ts';
import { ResourceClient } from '../src/kube/resource-client.ts';

const { values } = parseArgs({ options: { kubeconfig: { type: 'string' }, namespace: { type: 'string' }, concurrency: { type: 'string' }, 'backup-image': { type: 'string' }, informers: { type: 'boolean' } } });
if (!values.kubeconfig || !values.namespace) throw new Error('floor-writer: --kubeconfig and --namespace are required');
const client = new KubeClient({ config: KubeConfig.fromKubeconfigFile(values.kubeconfig) });
const schedules = new ResourceClient<BackupScheduleObject>(client, BACKUP_SCHEDULES);
const cronJobs = new ResourceClient<KubeObject>(client, CRON_JOBS);
const image = values['backup-image'];
const namespace = values.namespace;

/** Every object of `resource` in the namespace, and the resourceVersion to watch from. */
async function listAll<T extends KubeObject>(resource: ResourceClient<T>): Promise<{ items: T[]; resourceVersion: string }> {
  const items: T[] = [];
  let continueToken: string | undefined;
  let resourceVersion = '';
  do {
    const page = await resource.list({ namespace, limit: 500, ...(continueToken ? { continue: continueToken } : {}) });
    items.push(...page.items);
    continueToken = page.metadata.continue || undefined;
    resourceVersion = page.metadata.resourceVersion ?? '';
  } while (continueToken);
  return { items, resourceVersion };
}

const stopWatching = new AbortController();
/** The informer's minimum: a watch whose every object is parsed and stored by key. */
async function keepInStore<T extends KubeObject>(resource: ResourceClient<T>, listed: { items: T[]; resourceVersion: string }): Promise<void> {
  const store = new Map(listed.items.map((o) => [o.metadata.name, o]));
  for await (const event of resource.watch({ namespace, resourceVersion: listed.resourceVersion, signal: stopWatching.signal })) {
    if (event.type === 'ADDED' || event.type === 'MODIFIED') store.set(event.object.metadata.name, event.object);
    else if (event.type === 'DELETED') store.delete(event.object.metadata.name);
    else if (event.type === 'ERROR') throw new Error(`floor-writer: watch ${resource.collectionPath(namespace)} failed: ${event.object.message}`);
  }
}

const { items, resourceVersion } = await listAll(schedules);
const informers = values.informers
  ? [keepInStore(schedules, { items: [...items], resourceVersion }), keepInStore(cronJobs, await listAll(cronJobs))]
  : [];

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
stopWatching.abort();
await Promise.all(informers);
process.stdout.write(`${JSON.stringify({ objects: items.length, writes: 2 * items.length, ms: Math.round(performance.now() - started), cpuMs: Math.round((cpu.user + cpu.system) / 1000) })}\n`);
client.close();
