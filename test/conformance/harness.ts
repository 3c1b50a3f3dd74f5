/**
 * Conformance harness: connects to the cluster named by `CONFORMANCE_KUBECONFIG` (a real cluster) or starts the
 * in-process test API server and then talks to it only through its kubeconfig and HTTP, exactly as it
 * would to a real kube-apiserver. One cluster per test file (`useCluster()`); every test makes its own
 * namespaces with a random suffix, removed after the file, so files can run in parallel and against a
 * shared real cluster.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { ApiClient, type ApiResponse, type Doc } from './harness/http-client.ts';
import { endpointFromKubeconfig } from './harness/kubeconfig.ts';
import { parseServerVersion, type KubeVersion } from './harness/server-version.ts';
import { installWidgets, uninstallWidgets, type Widgets } from './harness/widget-crd.ts';
import { gatesFor, type Gates } from './version-gates.ts';

export { celMessage, widgetCrd, type Widgets } from './harness/widget-crd.ts';
export { VERSION_GATE_ANNOTATION, type BehaviourId } from './version-gates.ts';

export { ApiClient, WatchStream, withQuery } from './harness/http-client.ts';
export type { ApiResponse, Doc, WatchLine, RequestOptions } from './harness/http-client.ts';

/**
 * True when the suite runs against the cluster of `CONFORMANCE_KUBECONFIG`. An explicit variable, not
 * `KUBECONFIG`: a developer's shell usually has KUBECONFIG set, and `npm test` must neither write to
 * that cluster nor skip the test-server-only suites because of it.
 */
export const isRealCluster = Boolean(process.env['CONFORMANCE_KUBECONFIG']);

/**
 * A connected cluster, as seen by one test file. Its `has(ctx, id)` and `require(ctx, id)` gate an
 * expectation on the server's release through the table in `version-gates.ts`.
 */
export interface Cluster extends Gates {
  /** Client authenticated as the kubeconfig's (admin) user. */
  readonly api: ApiClient;
  /** Path of a kubeconfig for this cluster (for kubectl). */
  readonly kubeconfigPath: string;
  /** True when the `/debug/*` endpoints of the test server answer (never on a real cluster). */
  readonly hasDebug: boolean;
  /** The server's release, from `GET /version` read once at connect. */
  readonly version: KubeVersion;
  /** A fresh namespace `<prefix>-<random>`, deleted after the file. */
  namespace(prefix?: string): Promise<string>;
  /** Registers a cluster-scoped path to DELETE after the file. */
  cleanupLater(path: string): void;
  /** A ServiceAccount in `ns` and a client authenticated with a TokenRequest token for it. */
  serviceAccount(ns: string, name?: string): Promise<{ readonly user: string; readonly client: ApiClient; readonly token: string }>;
}

/** Random lowercase suffix for names. */
export function rand(n = 6): string {
  return randomBytes(8).toString('hex').slice(0, n);
}

/** Polls `probe` every `intervalMs` until it returns a value other than `undefined` (or throws after `timeoutMs`). */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 5_000, intervalMs = 50): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (performance.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Reads a dotted path (`spec.template.spec`) out of a decoded document. */
export function dig(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** Throws with the response text unless the status is one of `expected` (for setup steps). */
export function must<T>(res: ApiResponse<T>, ...expected: number[]): T {
  const ok = expected.length ? expected.includes(res.status) : res.status >= 200 && res.status < 300;
  if (!ok) throw new Error(`unexpected HTTP ${res.status}: ${res.text.slice(0, 500)}`);
  return res.body;
}

interface StartedServer {
  readonly kubeconfigPath: string;
  stop(): Promise<void>;
}

async function startTestServer(dir: string): Promise<StartedServer> {
  // Imported lazily so a run against a real cluster never loads the test server.
  const mod = (await import('../apiserver/index.ts')) as {
    startTestApiServer(options?: { port?: number; host?: string; bookmarkIntervalMs?: number }): Promise<{
      kubeconfig(o?: { namespace?: string }): string;
      stop(): Promise<void>;
    }>;
  };
  const server = await mod.startTestApiServer({ port: 0 });
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, server.kubeconfig());
  return { kubeconfigPath, stop: () => server.stop() };
}

/** Connects (or starts the test server) and returns the cluster plus a `close` for afterAll. */
export async function connect(): Promise<Cluster & { close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-'));
  const started = isRealCluster ? undefined : await startTestServer(dir);
  const kubeconfigPath = started?.kubeconfigPath ?? process.env['CONFORMANCE_KUBECONFIG']!;
  const endpoint = endpointFromKubeconfig(kubeconfigPath);
  const api = new ApiClient(endpoint);
  // On the test server the debug endpoints must answer: a broken /debug would otherwise skip the
  // fault-injection and request-log suites silently.
  const probe = isRealCluster ? undefined : await api.get('/debug/requests');
  if (probe && probe.status !== 200) throw new Error(`test server: GET /debug/requests answered ${probe.status}`);
  const hasDebug = probe !== undefined;
  const versionRes = await api.get('/version');
  if (versionRes.status !== 200) throw new Error(`GET /version answered ${versionRes.status}: ${versionRes.text.slice(0, 200)}`);
  const version = parseServerVersion(versionRes.body);
  const namespaces: string[] = [];
  const clusterPaths: string[] = [];
  const clients: ApiClient[] = [api];

  const cluster: Cluster & { close(): Promise<void> } = {
    api,
    kubeconfigPath,
    hasDebug,
    version,
    ...gatesFor(version),
    async namespace(prefix = 'conf') {
      const name = `${prefix}-${rand()}`;
      must(await api.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }), 201);
      namespaces.push(name);
      return name;
    },
    cleanupLater(path) {
      clusterPaths.push(path);
    },
    async serviceAccount(ns, name = `sa-${rand(4)}`) {
      must(await api.post(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } }), 201);
      const res = await api.post(`/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: {},
      });
      const token = dig(must(res, 201, 200), 'status.token');
      if (typeof token !== 'string' || !token) throw new Error(`TokenRequest for ${ns}/${name} returned no status.token: ${res.text}`);
      const client = api.as(token);
      clients.push(client);
      return { user: `system:serviceaccount:${ns}:${name}`, client, token };
    },
    async close() {
      await Promise.allSettled([
        ...clusterPaths.map((p) => api.delete(p)),
        ...namespaces.map((n) => api.delete(`/api/v1/namespaces/${n}`)),
      ]);
      for (const c of clients) c.close();
      await started?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return cluster;
}

/** Registers beforeAll/afterAll for this file and returns an accessor for the connected cluster. */
export function useCluster(): () => Cluster {
  let cluster: (Cluster & { close(): Promise<void> }) | undefined;
  beforeAll(async () => {
    cluster = await connect();
  });
  afterAll(async () => {
    await cluster?.close();
  });
  return () => {
    if (!cluster) throw new Error('cluster not connected (useCluster must be called at file level)');
    return cluster;
  };
}

/** Installs the suite's Widget CRD under a random group for this file (after `useCluster`). */
export function useWidgets(cluster: () => Cluster): () => Widgets {
  let widgets: Widgets | undefined;
  beforeAll(async () => {
    widgets = await installWidgets(cluster().api, `f${rand()}.fixtures.example.com`);
  });
  afterAll(async () => {
    await uninstallWidgets(cluster().api, widgets);
  });
  return () => {
    if (!widgets) throw new Error('widgets CRD not installed');
    return widgets;
  };
}

/** The exact `metav1.Status` body Kubernetes sends for a failed request. */
export function failure(code: number, reason: string, message: string, details?: Record<string, unknown>): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
}

/** A ConfigMap body. */
export function configMap(name: string, extra: { data?: Record<string, string>; metadata?: Record<string, unknown> } = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra.metadata }, data: extra.data ?? { k: 'v' } };
}

/** Path of a namespaced core/v1 ConfigMap collection or object. */
export function cmPath(ns: string, name?: string): string {
  return `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;
}
