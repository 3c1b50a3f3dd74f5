/**
 * The controller bundle with `--conversion-webhook-bind-address`, two replicas with leader election,
 * against the test API server with dist/ (the empty Secret, its Role, the CRD rule): the leader fills the
 * Secret and injects the CA into the CRD, both replicas serve the certificate, a TLS client trusting
 * only the Secret's CA bundle gets conversions from each, the API server converts a v1alpha1 write
 * through the follower, and no request is refused by RBAC.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/kube/object.ts';
import { CRD_NAME } from '../../src/api/constants.ts';
import { WEBHOOK_SECRET_NAME, WEBHOOK_SERVICE_NAME } from '../../src/manifests/index.ts';
import { tlsRequest } from '../runtime/tls-client.ts';
import { buildBundle, clientFor, ControllerProcess, CONTROLLER_SA, CONTROLLER_USER, LEASE, startCluster, waitFor, WEBHOOK_FLAG, type Cluster } from './harness.ts';
import { api, scheduleManifestV1alpha1 } from './scenarios.ts';

let cluster: Cluster;
let bundle: string;
const replicas: ControllerProcess[] = [];

/** The webhook's URL (with its path) as the replica logs it. */
const webhookUrl = async (p: ControllerProcess): Promise<string> => String((await p.waitForLog('the webhook to listen', (r) => r['msg'] === 'conversion webhook listening'))['url']);

beforeAll(async () => {
  [bundle, cluster] = await Promise.all([buildBundle(), startCluster()]);
  const flags = (id: string) => ['--kubeconfig', cluster.controllerKubeconfig, '--leader-elect', `--lease-name=${LEASE.name}`, `--lease-namespace=${LEASE.namespace}`, `--leader-election-id=${id}`, WEBHOOK_FLAG];
  replicas.push(ControllerProcess.start(bundle, flags('replica-a')));
  await replicas[0]!.waitForLog('replica A to write the certificates', (r) => r['msg'] === 'webhook certificates written');
  replicas.push(ControllerProcess.start(bundle, flags('replica-b')));
  await replicas[1]!.waitForLog('replica B to load the certificate', (r) => r['msg'] === 'serving certificate loaded');
}, 60_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await cluster?.stop();
});

describe('conversion webhook in the controller bundle', () => {
  it('serves conversions from the leader and the follower with the certificate the leader keeps in the shipped Secret', async () => {
    const secret = await clientFor<KubeObject & { data?: Record<string, string> }>(cluster.admin, 'Secret').get({ namespace: CONTROLLER_SA.namespace, name: WEBHOOK_SECRET_NAME });
    const caPem = Buffer.from(secret.data?.['ca-bundle.crt'] ?? '', 'base64').toString();
    const review = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'e2e', desiredAPIVersion: 'kubelings.dev/v1alpha1', objects: [] } };
    for (const replica of replicas) {
      const res = await tlsRequest(await webhookUrl(replica), { caPem, servername: `${WEBHOOK_SERVICE_NAME}.${CONTROLLER_SA.namespace}.svc`, body: JSON.stringify(review) });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: 'e2e', convertedObjects: [], result: { status: 'Success' } } });
    }
    expect(replicas[1]!.records().some((r) => r['msg'] === 'webhook certificates written')).toBe(false);
    // Ready (in the Service's endpoints) only with a certificate loaded: the readiness check says so.
    for (const replica of replicas) {
      const health = String((await replica.waitForLog('the health server', (r) => r['msg'] === 'starting'))['health']);
      const res = await fetch(`${health}/readyz/conversion-webhook-certificate`);
      expect([res.status, await res.text()]).toEqual([200, 'ok']);
    }
    // The leader injected the CA into the CRD of dist/; kube-apiserver, routed to the follower, converts with it.
    await waitFor('the caBundle in the CRD', async () => {
      const crd = await clientFor(cluster.admin, 'CustomResourceDefinition').get({ name: CRD_NAME });
      return ((crd['spec'] as { conversion: { webhook: { clientConfig: { caBundle?: string } } } }).conversion.webhook.clientConfig.caBundle ?? '') === secret.data?.['ca-bundle.crt'];
    });
    await cluster.routeWebhookTo(replicas[1]!);
    const k = api(cluster.admin);
    await k.createNamespace('convert');
    await k.schedulesV1alpha1.create(scheduleManifestV1alpha1('convert', 'legacy') as never);
    expect((await k.schedules.get({ namespace: 'convert', name: 'legacy' })).spec.source).toEqual({ type: 'Etcd', etcd: { endpoints: ['https://etcd-0.etcd:2379'] } });
    const calls = cluster.server.requestLog.entries().filter((e) => e.user === CONTROLLER_USER && ['secrets', 'customresourcedefinitions'].includes(e.resource));
    expect(new Set(calls.map((e) => `${e.verb} ${e.resource} ${e.code}`))).toEqual(new Set(['get secrets 200', 'update secrets 200', 'get customresourcedefinitions 200', 'patch customresourcedefinitions 200']));
  });

  it('stops cleanly: both replicas exit 0 on SIGTERM', async () => {
    expect(await Promise.all(replicas.splice(0).map((r) => r.stop()))).toEqual([0, 0]);
  });
});
