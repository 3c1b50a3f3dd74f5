/**
 * Processes and accounts for the chaos scenarios, on top of the e2e harness: controller replicas with
 * their own ServiceAccounts (so the request log tells them apart), bulk creation, and /proc and
 * /readyz probes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '../../src/kube/object.ts';
import { resolveTiming } from '../../src/runtime/leader-elector-options.ts';
import { clientFor, ControllerProcess, CONTROLLER_SA, distDocuments, LEASE, startCluster, type Cluster, type ClusterOn, type ClusterOptions, type ClusterServer } from '../e2e/harness.ts';
import { api, scheduleManifest } from '../e2e/scenarios.ts';

/** A ServiceAccount bound to the controller's roles (dist/ RBAC), with a kubeconfig. */
export interface ReplicaAccount {
  /** The user name the API server logs for it. */
  readonly user: string;
  readonly kubeconfig: string;
}

/**
 * Creates ServiceAccount `name` in the controller's namespace, binds it to the ClusterRole and the
 * leader-election Role of dist/, as a second Deployment of the same manifests would be, and writes a
 * kubeconfig for it (optionally pointing at `serverUrl`, e.g. a proxy).
 */
export async function replicaAccount(cluster: Cluster, name: string, serverUrl?: string): Promise<ReplicaAccount> {
  const admin = cluster.admin;
  await clientFor(admin, 'ServiceAccount').create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: CONTROLLER_SA.namespace } });
  const subjects = [{ kind: 'ServiceAccount', name, namespace: CONTROLLER_SA.namespace }];
  // Every binding dist/ gives the controller's ServiceAccount, given to this one too.
  type Binding = KubeObject & { roleRef: unknown; subjects?: { kind: string; name: string; namespace?: string }[] };
  const bindings = distDocuments().filter((d): d is Binding => (d.kind === 'ClusterRoleBinding' || d.kind === 'RoleBinding') && ((d as Binding).subjects ?? []).some((x) => x.kind === 'ServiceAccount' && x.name === CONTROLLER_SA.name && x.namespace === CONTROLLER_SA.namespace));
  for (const binding of bindings) {
    const metadata = { name: `chaos-${name}-${binding.metadata.name}`, ...(binding.metadata.namespace ? { namespace: binding.metadata.namespace } : {}) };
    await clientFor(admin, binding.kind ?? '').create({ apiVersion: binding.apiVersion, kind: binding.kind, metadata, roleRef: binding.roleRef, subjects });
  }
  const token = await cluster.server.serviceAccountToken(CONTROLLER_SA.namespace, name, 7200);
  let text = cluster.server.kubeconfig({ token, user: name });
  if (serverUrl) text = text.replace(cluster.server.httpsUrl, serverUrl);
  const kubeconfig = join(cluster.dir, `${name}.kubeconfig`);
  writeFileSync(kubeconfig, text);
  return { user: `system:serviceaccount:${CONTROLLER_SA.namespace}:${name}`, kubeconfig };
}

/**
 * The replicas' leader-election timing: the operator passes the elector none of its own, so its
 * defaults (client-go's: lease 15 s, renew deadline 10 s, retry 2 s, jitter 1.2).
 */
export const LEADER_TIMING = resolveTiming({ identity: 'any replica' });

/** The flags dist/'s Deployment passes for leader election (the Lease it ships). */
export const LEADER_FLAGS = ['--leader-elect', `--lease-name=${LEASE.name}`, `--lease-namespace=${LEASE.namespace}`] as const;

/** Starts the bundle for `kubeconfig`, quiet unless asked (`info` keeps stdout small). */
export function startController(bundle: string, kubeconfig: string, args: readonly string[] = []): ControllerProcess {
  return ControllerProcess.start(bundle, ['--kubeconfig', kubeconfig, '--log-level=info', ...args]);
}

/** Creates `names` in `namespace` with `parallel` requests in flight; `spec` adds fields per name. */
export async function createSchedules(cluster: ClusterOn<ClusterServer>, namespace: string, names: readonly string[], parallel = 32, spec: (name: string) => Record<string, unknown> = () => ({})): Promise<void> {
  const k = api(cluster.admin);
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < names.length) {
      const name = names[next++] as string;
      await k.schedules.create(scheduleManifest(namespace, name, spec(name)) as never);
    }
  }));
}

/** Resident set size of a process in MiB, from /proc. */
export function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line?.match(/\d+/)?.[0] ?? 0) / 1024;
}

/** The health server URL a controller logged at start. */
export function healthUrl(process: ControllerProcess): string | undefined {
  const url = process.records().find((r) => r['msg'] === 'starting')?.['health'];
  return typeof url === 'string' ? url : undefined;
}

/** GET /readyz of a controller: its HTTP status, or 0 when it does not answer within a second. */
export async function readyz(process: ControllerProcess): Promise<number> {
  const url = healthUrl(process);
  if (!url) return 0;
  try {
    return (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1_000) })).status;
  } catch {
    return 0;
  }
}

/** The Lease's holder, as the admin reads it. */
export async function leaseHolder(cluster: Cluster): Promise<string | undefined> {
  const lease = await clientFor<KubeObject & { spec?: { holderIdentity?: string } }>(cluster.admin, 'Lease').get(LEASE);
  return lease.spec?.holderIdentity || undefined;
}

/** The spec.schedule values the scenarios' edits cycle through (all valid, all different). */
export const SCHEDULES = ['0 2 * * *', '15 3 * * *', '30 4 * * 1-5', '@hourly', '*/20 * * * *', '0 0 1 * *'] as const;

/**
 * Runs `body` against a fresh cluster (test API server `server` options) with one controller (no
 * leader election, `args` added), and stops both afterwards whatever happens.
 */
export function withController<T>(bundle: string, args: readonly string[], body: (cluster: Cluster, controller: ControllerProcess) => Promise<T>, server: ClusterOptions['server'] = {}): Promise<T> {
  return withControllerOn(() => startCluster({ server }), bundle, args, body);
}

/** {@link withController} on the cluster `start` makes (e.g. the test API server as its own process). */
export async function withControllerOn<C extends ClusterOn<ClusterServer>, T>(start: () => Promise<C>, bundle: string, args: readonly string[], body: (cluster: C, controller: ControllerProcess) => Promise<T>): Promise<T> {
  const cluster = await start();
  const controller = startController(bundle, cluster.controllerKubeconfig, args);
  try {
    return await body(cluster, controller);
  } finally {
    await controller.stop();
    await cluster.stop();
  }
}
