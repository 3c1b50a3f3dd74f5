/**
 * The upgrade of test/e2e/upgrade.ts on a REAL kube-apiserver (the plane of docs/real-cluster.md): the
 * previous release's objects applied over a clean slate, writes counted by the API server's own
 * `apiserver_request_total` (no request log there), storage read from etcd when its URL is given.
 *
 * The plane runs no Pods and no kube-proxy, so a Service's cluster IP leads nowhere. kube-apiserver
 * resolves an ExternalName Service to its name, though, and still checks the webhook's certificate
 * against `<service>.<namespace>.svc`: so the webhook Service of the new dist/ is applied as an
 * ExternalName Service naming this machine, and routing to a replica sets the CRD's webhook port to
 * the replica's. Everything else is real: the certificate the replicas keep in their Secret, the CA
 * bundle they publish into the CRD, kube-apiserver calling the webhook and checking both.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient, must } from '../conformance/harness.ts';
import { parseServerVersion } from '../conformance/harness/server-version.ts';
import { hasBehaviour } from '../conformance/version-gates.ts';
import { endpointFromKubeconfig } from '../conformance/harness/kubeconfig.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { WEBHOOK_SERVICE_NAME } from '../../src/manifests/operator-chart.ts';
import { clientFromKubeconfig, CONTROLLER_SA, LEASE, waitFor, type ControllerProcess } from '../e2e/harness.ts';
import { applyRelease, readyzOk, type SpanWrites, type UpgradeCluster, type UpgradeClusterFactory } from '../e2e/upgrade.ts';
import { countsSince, isWriteKey, requestCounts } from './apiserver-requests.ts';
import { writeControllerKubeconfig } from './controller-kubeconfig.ts';

const CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const SCHEDULES_CRD = 'backupschedules.kubelings.dev';
/** Objects a later release adds, removed so the cluster starts as one that only ever ran the previous release. */
const LATER_OBJECTS = [
  `${CRD}/restores.kubelings.dev`,
  `/api/v1/namespaces/${CONTROLLER_SA.namespace}/secrets/backupschedule-operator-webhook-tls`,
  `/api/v1/namespaces/${CONTROLLER_SA.namespace}/services/${WEBHOOK_SERVICE_NAME}`,
  `/apis/coordination.k8s.io/v1/namespaces/${LEASE.namespace}/leases/${LEASE.name}`,
];
const COUNTED = ['cronjobs', 'backupschedules', 'events'];

/** Options of {@link realUpgradeCluster}. */
export interface RealUpgradeClusterOptions {
  /** An admin kubeconfig of a cluster the upgrade may take over: its BackupSchedule CRD is deleted first. */
  readonly kubeconfigPath: string;
  /** etcd's client URL (the plane's `http://127.0.0.1:12379`), to read what is stored; without it that is not checked. */
  readonly etcdUrl?: string;
}

/**
 * Deletes the BackupSchedule CRD and with it every schedule, whatever version each is stored in: its
 * conversion is switched off first, since with no replica serving the webhook kube-apiserver could not
 * list objects stored in another version to delete them (namespace and CRD deletion both hang on it).
 */
async function deleteSchedulesCrd(api: ApiClient): Promise<void> {
  const res = await api.patch(`${CRD}/${SCHEDULES_CRD}`, { spec: { conversion: { strategy: 'None', webhook: null } } });
  if (res.status !== 200 && res.status !== 404) throw new Error(`switching off ${SCHEDULES_CRD}'s conversion: ${res.status} ${res.text.slice(0, 300)}`);
  await deleteAndWait(api, `${CRD}/${SCHEDULES_CRD}`);
}

async function deleteAndWait(api: ApiClient, path: string): Promise<void> {
  const res = await api.delete(path);
  if (res.status === 404) return;
  if (res.status >= 300) throw new Error(`DELETE ${path}: ${res.status} ${res.text.slice(0, 300)}`);
  await waitFor(`${path} to be gone`, async () => (await api.get(path)).status === 404, 180_000, 500);
}

/** The options' cluster for an upgrade's `cluster`: its namespace is deleted first if it exists, and at the end. */
export function realUpgradeCluster(options: RealUpgradeClusterOptions): UpgradeClusterFactory {
  return async (previous, namespace) => {
    const adminText = readFileSync(options.kubeconfigPath, 'utf8');
    const api = new ApiClient(endpointFromKubeconfig(options.kubeconfigPath));
    const admin = clientFromKubeconfig(adminText);
    const dir = mkdtempSync(join(tmpdir(), 'bks-real-upgrade-'));
    try {
      // A clean slate: the CRD with every schedule of earlier runs, the namespace, later releases' objects.
      await deleteSchedulesCrd(api);
      await deleteAndWait(api, `/api/v1/namespaces/${namespace}`);
      for (const path of LATER_OBJECTS) await deleteAndWait(api, path);
      // Nothing else may write what the upgrade counts (apiserver_request_total is cluster-wide): the
      // namespaces of earlier runs, and the garbage collector behind them, must be done first.
      await waitFor('no namespace terminating', async () => {
        const namespaces = must(await api.get<{ items: { metadata: { name: string }; status?: { phase?: string } }[] }>('/api/v1/namespaces'), 200);
        return namespaces.items.every((n) => n.status?.phase !== 'Terminating');
      }, 300_000, 1_000);
      await applyRelease(admin, previous.map(routedToThisMachine));
      await waitFor('the previous release\'s CRD to be served', async () => (await api.get('/apis/kubelings.dev/v1alpha1/backupschedules?limit=1')).status === 200, 60_000, 200);
      const controllerKubeconfig = await writeControllerKubeconfig(api, adminText, dir);
      const adminKubeconfig = join(dir, 'admin.kubeconfig');
      writeFileSync(adminKubeconfig, adminText);
      const timeZones = hasBehaviour(parseServerVersion(must(await api.get('/version'), 200)), 'cronjob-time-zone');
      const writeCounts = async (): Promise<Map<string, number>> => new Map([...(await requestCounts(api, COUNTED))].filter(([key]) => isWriteKey(key)));
      return {
        admin,
        adminKubeconfig,
        controllerKubeconfig,
        timeZones,
        apply: (docs) => applyRelease(admin, docs.map(routedToThisMachine)),
        async routeWebhookTo(replica: ControllerProcess) {
          const port = Number(new URL(`https://${await replica.webhookAddress()}`).port);
          must(await api.patch(`${CRD}/${SCHEDULES_CRD}`, { spec: { conversion: { webhook: { clientConfig: { service: { port } } } } } }), 200);
          await waitFor('the replica to be ready', () => readyzOk(replica), 120_000, 100);
        },
        async countWrites() {
          const before = await requestCounts(api, COUNTED);
          return async (): Promise<SpanWrites> => {
            const since = [...countsSince(before, await requestCounts(api, COUNTED))];
            const sum = (keep: (key: string) => boolean): number => since.filter(([key]) => keep(key)).reduce((total, [, n]) => total + n, 0);
            return {
              childWrites: Object.fromEntries(since.filter(([key]) => isWriteKey(key) && key.split(' ')[1] === 'cronjobs').map(([key, n]) => [key.replace(' cronjobs', ''), n])),
              statusWrites: sum((key) => isWriteKey(key) && / backupschedules\/status 2\d\d$/.test(key)),
              conversionErrors: sum((key) => / backupschedules(\/\w+)? 500$/.test(key)),
            };
          };
        },
        async quiet(ms) {
          let last = await writeCounts();
          let changedAt = Date.now();
          await waitFor(`${ms} ms without writes to BackupSchedules, CronJobs or Events`, async () => {
            const now = await writeCounts();
            if (countsSince(last, now).size > 0) [last, changedAt] = [now, Date.now()];
            return Date.now() - changedAt >= ms;
          }, 120_000, 250);
        },
        notStoredInV1: async () => (options.etcdUrl === undefined ? undefined : storedVersions(options.etcdUrl).then((versions) => versions.filter((v) => v !== 'kubelings.dev/v1').length)),
        async stop() {
          // The replicas are gone: the schedules go with the CRD, so the namespace's deletion needs no webhook.
          // A failure here is reported, not thrown, so it never hides the scenario's own error.
          await deleteSchedulesCrd(api).then(() => deleteAndWait(api, `/api/v1/namespaces/${namespace}`)).catch((err: unknown) => {
            process.stderr.write(`upgrade cluster clean-up: ${(err as Error).message}\n`);
          });
          admin.close();
          api.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    } catch (err) {
      admin.close();
      api.close();
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  };
}

/** The webhook's Service as an ExternalName Service naming this machine (the module doc says why). */
function routedToThisMachine(doc: KubeObject): KubeObject {
  if (doc.kind !== 'Service' || doc.metadata.name !== WEBHOOK_SERVICE_NAME) return doc;
  return { ...doc, spec: { type: 'ExternalName', externalName: '127.0.0.1', ports: [{ name: 'webhook', port: 443 }] } } as KubeObject;
}

/** The `apiVersion` every BackupSchedule is stored in, read from etcd's JSON gateway. */
async function storedVersions(etcdUrl: string): Promise<string[]> {
  const prefix = `/registry/${SCHEDULES_CRD.split('.').slice(1).join('.')}/backupschedules/`;
  const end = `${prefix.slice(0, -1)}${String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)}`;
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  const res = await fetch(`${etcdUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: b64(prefix), range_end: b64(end) }) });
  if (!res.ok) throw new Error(`etcd range ${prefix}: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { kvs?: { value: string }[] };
  return (body.kvs ?? []).map((kv) => String((JSON.parse(Buffer.from(kv.value, 'base64').toString('utf8')) as { apiVersion?: string }).apiVersion));
}
