/**
 * The conversion webhook down (issue 12): kube-apiserver cannot reach any replica's webhook, first
 * while the controller runs (a NetworkPolicy or a broken Service), then with every replica gone.
 * Requests in v1alpha1 fail with the API server's error naming the webhook; nothing is lost or half
 * written; v1, the stored version, keeps working, and so does the controller, which reads v1 and so
 * never waits on its own webhook. Once the webhook is back, v1alpha1 reads show every object again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiStatusError } from '../../src/kube/api-status-error.ts';
import { WEBHOOK_SERVICE_NAME } from '../../src/manifests/index.ts';
import { buildBundle, ControllerProcess, CONTROLLER_SA, LEASE, startCluster, waitFor, WEBHOOK_FLAG, type Cluster } from './harness.ts';
import { api, readyOf, scheduleManifest, scheduleManifestV1alpha1 } from './scenarios.ts';

const NS = 'webhook-down';
let cluster: Cluster;
let bundle: string;
let controller: ControllerProcess;
const flags = (): string[] => ['--kubeconfig', cluster.controllerKubeconfig, '--leader-elect', `--lease-name=${LEASE.name}`, `--lease-namespace=${LEASE.namespace}`, WEBHOOK_FLAG];

/** The error of a request expected to fail, as the client sees it. */
async function failure(request: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await request;
  } catch (err) {
    if (err instanceof ApiStatusError) return { code: err.status.code ?? 0, message: err.status.message ?? '' };
    throw err;
  }
  throw new Error('the request succeeded');
}

/** Points the webhook's Service at an address nothing listens on (no reachable endpoint). */
const breakWebhook = (): void => cluster.server.registerService(CONTROLLER_SA.namespace, WEBHOOK_SERVICE_NAME, 443, '127.0.0.1:9');

beforeAll(async () => {
  [bundle, cluster] = await Promise.all([buildBundle(), startCluster()]);
  controller = ControllerProcess.start(bundle, flags());
  await cluster.routeWebhookTo(controller);
  const k = api(cluster.admin);
  await k.createNamespace(NS);
  await waitFor('a v1alpha1 create to be converted', () => k.schedulesV1alpha1.create(scheduleManifestV1alpha1(NS, 'legacy') as never).then(() => true, () => false), 30_000);
  await k.schedules.create(scheduleManifest(NS, 'modern', { retention: { keepDaily: 7 } }) as never);
  await k.waitForReady(NS, 'legacy');
  await k.waitForReady(NS, 'modern');
}, 60_000);

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

describe('the conversion webhook unreachable', () => {
  it('fails v1alpha1 requests with the API server error naming the webhook, while v1 and the controller keep working', async () => {
    const k = api(cluster.admin);
    breakWebhook();
    const read = await failure(k.schedulesV1alpha1.get({ namespace: NS, name: 'legacy' }));
    expect(read.code).toBe(500);
    expect(read.message).toMatch(/^conversion webhook for kubelings\.dev\/v1, Kind=BackupSchedule failed: Post "https:\/\/backupschedule-operator-webhook\.backupschedule-system\.svc:443\/convert\?timeout=30s": /);
    expect((await failure(k.schedulesV1alpha1.list({ namespace: NS }))).code).toBe(500);
    // A write in v1alpha1 is refused whole: nothing is stored.
    const write = await failure(k.schedulesV1alpha1.create(scheduleManifestV1alpha1(NS, 'during-outage') as never));
    expect(write.message).toContain('conversion webhook for kubelings.dev/v1alpha1, Kind=BackupSchedule failed');
    expect((await failure(k.schedules.get({ namespace: NS, name: 'during-outage' }))).code).toBe(404);
    // v1 is what is stored: reads and writes need no conversion, and the controller reconciles them.
    expect((await k.schedules.list({ namespace: NS })).items.map((s) => s.metadata.name).sort()).toEqual(['legacy', 'modern']);
    await k.schedules.patch({ namespace: NS, name: 'legacy' }, { spec: { schedule: '0 5 * * *', retention: { keepLast: 3, keepWeekly: 4 } } });
    const child = await k.waitForCronJob(NS, 'legacy', (c) => c.spec.schedule === '0 5 * * *');
    expect(child.spec.jobTemplate.spec.template.spec.containers[0].args).toEqual(expect.arrayContaining(['--keep-last=3', '--keep-weekly=4']));
    await k.waitForReady(NS, 'legacy', (s) => readyOf(s)?.status === 'True' && readyOf(s)?.observedGeneration === s.metadata.generation);
    expect(controller.child.exitCode).toBeNull();
  }, 60_000);

  it('with every replica gone, v1alpha1 still fails clearly; once one is back every object reads in v1alpha1 again, the outage\'s v1 write included', async () => {
    const k = api(cluster.admin);
    await controller.stop();
    expect((await failure(k.schedulesV1alpha1.get({ namespace: NS, name: 'modern' }))).message).toMatch(/^conversion webhook for kubelings\.dev\/v1, Kind=BackupSchedule failed: /);
    await k.schedules.create(scheduleManifest(NS, 'while-down') as never);
    controller = ControllerProcess.start(bundle, flags());
    await cluster.routeWebhookTo(controller);
    const listed = await waitFor('v1alpha1 reads to work again', () => k.schedulesV1alpha1.list({ namespace: NS }).then((l) => l, () => undefined), 30_000);
    expect(listed.items.map((s) => s.metadata.name).sort()).toEqual(['legacy', 'modern', 'while-down']);
    // What v1alpha1 cannot express rides in the annotation and survives the round trip through it.
    const legacy = listed.items.find((s) => s.metadata.name === 'legacy')!;
    expect(legacy.spec.retention).toEqual({ keepLast: 1000 });
    expect(JSON.parse(legacy.metadata.annotations?.['kubelings.dev/v1-retention'] ?? '{}')).toEqual({ keepLast: 3, keepWeekly: 4 });
    expect((await k.schedules.get({ namespace: NS, name: 'legacy' })).spec.retention).toEqual({ keepLast: 3, keepWeekly: 4 });
    await k.waitForReady(NS, 'while-down');
  }, 60_000);
});
