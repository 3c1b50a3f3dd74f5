/**
 * `--namespace` (repeatable): the controller watches and touches only the namespaces it was given. With
 * `watchedNamespaces` in the chart (which passes the flags), its RBAC is narrowed the same way: the
 * ClusterRole is bound in each watched namespace only, so its token is refused everywhere else.
 */
import { Testing } from 'cdk8s';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OperatorChart } from '../../src/manifests/index.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { CRD_NAME } from '../../src/api/constants.ts';
import { buildBundle, clientFromKubeconfig, ControllerProcess, CONTROLLER_SA, CONTROLLER_USER, deploymentArgs, startCluster, waitFor, type Cluster } from './harness.ts';
import { api, controllerWrites, scheduleManifest } from './scenarios.ts';

const WATCHED = ['team-a', 'team-b'];
let bundle: string;
const started: { cluster: Cluster; controller: ControllerProcess }[] = [];

beforeAll(async () => {
  bundle = await buildBundle();
});

afterAll(async () => {
  for (const { cluster, controller } of started) {
    await controller.stop();
    await cluster.stop();
  }
});

/** A cluster from `documents` (dist/ by default) with the controller started with `args`. */
async function run(args: readonly string[], documents?: readonly KubeObject[]): Promise<Cluster> {
  const cluster = await startCluster(documents ? { documents } : {});
  const controller = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, ...args]);
  started.push({ cluster, controller });
  await controller.waitForLog('workers to start', (r) => r['msg'] === 'starting workers');
  return cluster;
}

/** Schedules in team-c, team-a and team-b: only the watched ones converge, team-c is never touched. */
async function reconcilesOnlyTheWatched(cluster: Cluster, created: readonly string[]): Promise<void> {
  const k = api(cluster.admin);
  // team-c first: by the time team-a and team-b are Ready, the controller has had every chance to touch it.
  for (const ns of ['team-c', ...WATCHED]) {
    if (!created.includes(ns)) await k.createNamespace(ns);
    await k.schedules.create(scheduleManifest(ns, 'nightly') as never);
  }
  for (const ns of WATCHED) await k.waitForReady(ns, 'nightly');
  expect((await k.schedules.get({ namespace: 'team-c', name: 'nightly' })).status).toBeUndefined();
  expect((await k.cronJobs.list({ namespace: 'team-c' })).items).toEqual([]);
  expect(controllerWrites(cluster.server.requestLog.entries(), { namespace: 'team-c', includeEvents: true })).toEqual([]);
  const lists = cluster.server.requestLog.entries().filter((e) => e.verb === 'list' && e.resource === 'cronjobs' && e.user.includes('backupschedule-operator'));
  expect(new Set(lists.map((e) => e.namespace))).toEqual(new Set(WATCHED));
}

describe('watching chosen namespaces', () => {
  it('reconciles schedules in the given namespaces and leaves the others alone', async () => {
    const cluster = await run(WATCHED.map((ns) => `--namespace=${ns}`));
    await reconcilesOnlyTheWatched(cluster, []);
  });

  it('with watchedNamespaces in the chart, its token may read and write only there', async () => {
    const objects = Testing.synth(new OperatorChart(Testing.app(), 'op', { namespace: CONTROLLER_SA.namespace, watchedNamespaces: WATCHED })) as KubeObject[];
    // The watched namespaces exist before the operator is applied (their RoleBindings live in them).
    const namespaces = WATCHED.map((name): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }));
    const documents = [...namespaces, ...objects];
    const args = deploymentArgs(documents);
    expect(args.filter((a) => a.startsWith('--namespace'))).toEqual(WATCHED.map((ns) => `--namespace=${ns}`));
    // Its Deployment's arguments: leader election on the Lease, the webhook's certificate Secret and the CRD's caBundle.
    const cluster = await run(args, documents);
    await reconcilesOnlyTheWatched(cluster, WATCHED);
    await waitFor('the CRD caBundle injected', async () => ((await cluster.admin.request<{ spec: { conversion?: { webhook?: { clientConfig?: { caBundle?: string } } } } }>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`)).spec.conversion?.webhook?.clientConfig?.caBundle ?? '') !== '' || undefined);
    expect(cluster.server.requestLog.entries().filter((e) => e.user === CONTROLLER_USER && e.code === 403).map((e) => `${e.verb} ${e.resource} ${e.namespace ?? ''}`)).toEqual([]);
    const token = clientFromKubeconfig(cluster.server.kubeconfig({ token: await cluster.server.serviceAccountToken(CONTROLLER_SA.namespace, CONTROLLER_SA.name) }));
    try {
      const status = (path: string): Promise<number> => token.request('GET', path).then(() => 200, (err: { code?: number }) => err.code ?? 0);
      expect(await status('/apis/batch/v1/namespaces/team-a/cronjobs')).toBe(200);
      for (const path of ['/apis/batch/v1/namespaces/team-c/cronjobs', '/api/v1/namespaces/team-c/pods', '/apis/batch/v1/cronjobs', '/api/v1/pods']) expect(await status(path), path).toBe(403);
    } finally {
      token.close();
    }
  }, 60_000);
});
