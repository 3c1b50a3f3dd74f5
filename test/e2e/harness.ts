/**
 * E2E harness: the test API server with dist/ applied (RBAC enforced), and the controller bundle
 * (build/controller.mjs, what the image runs) started as its own process, authenticated with its
 * ServiceAccount's token. Used by the e2e tests, the demo and the convergence benchmark.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { bundleController } from '../../scripts/bundle.ts';
import { isAlreadyExists, isNotFound } from '../../src/kube/api-status-error.ts';
import { KubeClient } from '../../src/kube/kube-client.ts';
import { KubeConfig } from '../../src/kube/kube-config.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { ResourceClient, type ResourceType } from '../../src/kube/resource-client.ts';
import { BACKUP_SCHEDULES, CRON_JOBS } from '../../src/controller/resources.ts';
import { WEBHOOK_SERVICE_NAME } from '../../src/manifests/operator-chart.ts';
import { startTestApiServer, type TestApiServerOptions } from '../apiserver/index.ts';
import { CONTROLLER_NODE_FLAGS } from '../../src/controller/node-flags.ts';
import { ApiServerProcess } from './server-process.ts';

/** The test API server's handle, as {@link startTestApiServer} returns it. */
export type TestApiServer = Awaited<ReturnType<typeof startTestApiServer>>;

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));

/** The controller's ServiceAccount, from dist/. */
export const CONTROLLER_SA = { namespace: 'backupschedule-system', name: 'backupschedule-operator' } as const;
/** The user name the API server sees for the controller. */
export const CONTROLLER_USER = `system:serviceaccount:${CONTROLLER_SA.namespace}:${CONTROLLER_SA.name}`;
/** The Lease from dist/. */
export const LEASE = { namespace: 'backupschedule-system', name: 'backupschedule-operator-leader' } as const;

/** REST coordinates of every kind dist/ contains. */
const KINDS: Readonly<Record<string, ResourceType>> = {
  Namespace: { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false },
  ServiceAccount: { group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
  CustomResourceDefinition: { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false },
  ClusterRole: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterroles', kind: 'ClusterRole', namespaced: false },
  ClusterRoleBinding: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false },
  Role: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'roles', kind: 'Role', namespaced: true },
  RoleBinding: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'rolebindings', kind: 'RoleBinding', namespaced: true },
  Lease: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true },
  Secret: { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true },
  Service: { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true },
  Deployment: { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true },
  NetworkPolicy: { group: 'networking.k8s.io', version: 'v1', plural: 'networkpolicies', kind: 'NetworkPolicy', namespaced: true },
  Event: { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true },
  BackupSchedule: BACKUP_SCHEDULES,
  CronJob: CRON_JOBS,
};

/** The objects of the manifest files `folder`'s `Kustomization` lists, in its order (= file name order). */
export function kustomizationDocuments(folder: string): KubeObject[] {
  const kustomization = parseAllDocuments(readFileSync(join(folder, 'Kustomization'), 'utf8'))[0]?.toJS() as { resources: string[] };
  return kustomization.resources.flatMap((file) =>
    parseAllDocuments(readFileSync(join(folder, file), 'utf8')).map((doc) => doc.toJS() as KubeObject).filter((o) => o !== null),
  );
}

/** The objects of dist/ in apply order (Namespace, CRD, RBAC, Lease, Deployment); not the example. */
export function distDocuments(): KubeObject[] {
  return kustomizationDocuments(DIST);
}

/** The objects of dist/examples/ in apply order: the example Namespace, then `nightly-etcd`. */
export function exampleDocuments(): KubeObject[] {
  return kustomizationDocuments(join(DIST, 'examples'));
}

/**
 * A typed client for one of the kinds dist/ contains, in its version the harness uses (BackupSchedules
 * in v1, the storage version), or in the version of `apiVersion` when given (`kubelings.dev/v1alpha1`).
 */
export function clientFor<T extends KubeObject = KubeObject>(client: KubeClient, kind: string, apiVersion?: string): ResourceClient<T> {
  const type = KINDS[kind];
  if (!type) throw new Error(`harness: unknown kind ${kind}`);
  const version = apiVersion?.slice(apiVersion.indexOf('/') + 1);
  return new ResourceClient<T>(client, version === undefined ? type : { ...type, version });
}

/**
 * Creates `docs` in order. The Deployment is stored like any object (the test API server serves apps/v1)
 * but nothing runs it: no ReplicaSets or Pods; the tests start the controller as a local process. A
 * create answered 404 (a CRD not served yet) is retried.
 */
export async function applyDocuments(client: KubeClient, docs: readonly KubeObject[]): Promise<void> {
  for (const doc of docs) {
    const resource = clientFor(client, doc.kind ?? '', doc.apiVersion);
    for (let attempt = 0; ; attempt++) {
      try {
        await resource.create(doc);
        break;
      } catch (err) {
        if (isAlreadyExists(err)) break;
        if (isNotFound(err) && attempt < 100) {
          await sleep(50);
          continue;
        }
        throw err;
      }
    }
  }
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `probe` until it returns a value other than undefined/false, or fails naming `what`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    await sleep(everyMs);
  }
}

/** A KubeClient for a kubeconfig text. */
export function clientFromKubeconfig(kubeconfig: string): KubeClient {
  return new KubeClient({ config: KubeConfig.fromKubeconfig(kubeconfig) });
}

/** What the harness needs of a test API server, in this process ({@link TestApiServer}) or its own ({@link ApiServerProcess}). */
export interface ClusterServer {
  readonly httpsUrl: string;
  /** A kubeconfig (YAML): the admin's, or for a token or token file. */
  kubeconfig(options?: { token?: string; tokenFile?: string; user?: string }): string;
  serviceAccountToken(namespace: string, name: string, expirationSeconds?: number): Promise<string>;
  stop(): Promise<void>;
}

/** A running test API server `S` with dist/ applied, and a kubeconfig for the controller's ServiceAccount. */
export interface ClusterOn<S extends ClusterServer> {
  readonly server: S;
  /** Admin client. */
  readonly admin: KubeClient;
  /** Temp directory holding kubeconfigs; removed by {@link ClusterOn.stop}. */
  readonly dir: string;
  /** Path of the admin kubeconfig (for kubectl). */
  readonly adminKubeconfig: string;
  /**
   * Path of a kubeconfig authenticating as the controller's ServiceAccount through a token file, which
   * is re-issued before the token expires, as kubelet rotates a Pod's projected token.
   */
  readonly controllerKubeconfig: string;
  stop(): Promise<void>;
}

/** A cluster on the in-process test API server (its request log, faults and storage at hand). */
export interface Cluster extends ClusterOn<TestApiServer> {
  /**
   * Routes the conversion webhook's Service of dist/ to `controller`'s webhook once the replica is
   * ready by the readiness probe of dist/'s Deployment (what EndpointSlices and kube-proxy do for a
   * ready Pod); kube-apiserver then converts v1alpha1 requests through it.
   */
  routeWebhookTo(controller: ControllerProcess): Promise<void>;
}

type ControllerContainer = { args?: string[]; readinessProbe?: { httpGet?: { path?: string } } };

/** The controller container of the Deployment in `docs` (dist/ by default). */
function controllerContainer(docs: readonly KubeObject[] = distDocuments()): ControllerContainer {
  type Deployment = KubeObject & { spec: { template: { spec: { containers: ControllerContainer[] } } } };
  const container = docs.find((d): d is Deployment => d.kind === 'Deployment')?.spec.template.spec.containers[0];
  if (!container) throw new Error('no controller Deployment in the documents');
  return container;
}

/** The path of the readiness probe of dist/'s controller Deployment. */
function readinessProbePath(): string {
  const path = controllerContainer().readinessProbe?.httpGet?.path;
  if (!path) throw new Error("dist/'s controller Deployment has no HTTP readiness probe");
  return path;
}

/**
 * The arguments of the controller Deployment in `docs` (dist/ by default), minus its listen addresses
 * (ephemeral here; the webhook's becomes {@link WEBHOOK_FLAG}) and its log level: what a replica of that
 * release runs.
 */
export function deploymentArgs(docs: readonly KubeObject[] = distDocuments()): string[] {
  const args = controllerContainer(docs).args ?? [];
  const kept = args.filter((a) => !/^--(metrics-bind-address|health-probe-bind-address|conversion-webhook-bind-address|log-level)=/.test(a));
  return args.some((a) => a.startsWith('--conversion-webhook-bind-address=')) ? [...kept, WEBHOOK_FLAG] : kept;
}

/** A cluster whose test API server runs as its own process (latency measured through the server). */
export type ProcessCluster = ClusterOn<ApiServerProcess>;

/** The flag that makes a controller serve the conversion webhook, as dist/'s Deployment does, on a free port. */
export const WEBHOOK_FLAG = '--conversion-webhook-bind-address=127.0.0.1:0';

/** Options for {@link startCluster}. */
export interface ClusterOptions {
  /**
   * Also apply dist/examples/ (the example `kubelings/nightly-etcd`) after dist/.
   * @default false
   */
  readonly examples?: boolean;
  /** The operator's objects, instead of dist/'s (another synth variant). @default the objects of dist/ */
  readonly documents?: readonly KubeObject[];
  /** Filters the objects to apply. @default all of dist/ (and dist/examples/ with `examples`) */
  readonly filter?: (doc: KubeObject) => boolean;
  /** Rewrites objects of dist/ before they are applied (e.g. RBAC minus one rule). @default none */
  readonly rewrite?: (doc: KubeObject) => KubeObject;
  /** Lifetime of the controller's ServiceAccount tokens. @default 3600 (kube's TokenRequest default) */
  readonly tokenSeconds?: number;
  /**
   * Run the OwnerReferencesPermissionEnforcement admission plugin (OpenShift does; kube-apiserver's
   * default plugins do not). @default true
   */
  readonly enforceOwnerReferencePermissions?: boolean;
  /** Further test API server options (dropped fields, mutating hooks, reported version). @default none */
  readonly server?: Omit<TestApiServerOptions, 'enforceOwnerReferencePermissions'>;
}

/**
 * Starts the API server, applies dist/ (and dist/examples/ with `examples`), mints the SA token. The
 * server runs the OwnerReferencesPermissionEnforcement admission plugin unless told otherwise, as
 * OpenShift does: the controller must be allowed to set `blockOwnerDeletion` on its CronJobs.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const server = await startTestApiServer({ ...options.server, enforceOwnerReferencePermissions: options.enforceOwnerReferencePermissions ?? true });
  const cluster = await prepareCluster(server, options);
  return {
    ...cluster,
    async routeWebhookTo(controller) {
      const address = await controller.webhookAddress();
      const health = String((await controller.waitForLog('the health server', (r) => r['msg'] === 'starting'))['health']);
      const probe = `${health}${readinessProbePath()}`;
      await waitFor(`the replica to be ready (${probe})`, () => fetch(probe, { signal: AbortSignal.timeout(1_000) }).then((r) => r.ok, () => false), 120_000, 100);
      server.registerService(CONTROLLER_SA.namespace, WEBHOOK_SERVICE_NAME, 443, address);
    },
  };
}

/**
 * {@link startCluster} with the test API server as its own process (`npm run apiserver`), as
 * kube-apiserver is: for tests that measure latency through it. `server` options are not available
 * there (the CLI's flags are).
 */
export async function startProcessCluster(options: Omit<ClusterOptions, 'server'> = {}): Promise<ProcessCluster> {
  const flags = options.enforceOwnerReferencePermissions ?? true ? ['--enforce-owner-reference-permissions'] : [];
  const nodeFlags = (process.env['APISERVER_NODE_FLAGS'] ?? '').split(' ').filter((f) => f !== '');
  return prepareCluster(await ApiServerProcess.start({ flags, nodeFlags }), options);
}

/** Applies dist/ to a started `server`, waits for the CRD, and issues the controller's token file; stops the server on failure. */
async function prepareCluster<S extends ClusterServer>(server: S, options: ClusterOptions): Promise<ClusterOn<S>> {
  const dir = mkdtempSync(join(tmpdir(), 'bks-e2e-'));
  const admin = clientFromKubeconfig(server.kubeconfig());
  try {
    const adminKubeconfig = join(dir, 'admin.kubeconfig');
    writeFileSync(adminKubeconfig, server.kubeconfig());
    const all = [...(options.documents ?? distDocuments()), ...(options.examples === true ? exampleDocuments() : [])];
    const docs = all.filter(options.filter ?? (() => true)).map(options.rewrite ?? ((d) => d));
    await applyDocuments(admin, docs);
    // The CRD is served once established; tests create BackupSchedules right away. Listed in its storage
    // version (v1 in dist/, v1alpha1 in a release before it), which needs no conversion webhook.
    const crd = docs.find((d) => d.kind === 'CustomResourceDefinition') as (KubeObject & { spec: { group: string; versions: { name: string; storage: boolean }[] } }) | undefined;
    const stored = crd?.spec.versions.find((v) => v.storage);
    const listed = clientFor(admin, 'BackupSchedule', stored && crd ? `${crd.spec.group}/${stored.name}` : undefined);
    await waitFor('the BackupSchedule CRD to be served', () => listed.list({ limit: 1 }).then(() => true), 10_000);
    const tokenSeconds = options.tokenSeconds ?? 3600;
    const tokenFile = join(dir, 'controller.token');
    // Written aside and renamed, as kubelet's atomic writer does: a reader never sees half a token.
    const issueToken = async (): Promise<void> => {
      writeFileSync(`${tokenFile}.new`, await server.serviceAccountToken(CONTROLLER_SA.namespace, CONTROLLER_SA.name, tokenSeconds));
      renameSync(`${tokenFile}.new`, tokenFile);
    };
    await issueToken();
    // kubelet re-issues a projected token once 80 % of its lifetime has passed.
    const tokenRefresh = setInterval(() => void issueToken(), tokenSeconds * 800);
    tokenRefresh.unref();
    const controllerKubeconfig = join(dir, 'controller.kubeconfig');
    writeFileSync(controllerKubeconfig, server.kubeconfig({ tokenFile, user: CONTROLLER_SA.name }));
    return {
      server,
      admin,
      dir,
      adminKubeconfig,
      controllerKubeconfig,
      async stop() {
        clearInterval(tokenRefresh);
        admin.close();
        await server.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    admin.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

let bundled: Promise<string> | undefined;

/**
 * Builds the controller bundle into a temp folder (the same esbuild build `npm run bundle` makes), once
 * per test process: the sources do not change during a run. Under vitest the folder is inside the run's
 * scratch folder (test/global-setup.ts), removed at the end of the run.
 */
export function buildBundle(): Promise<string> {
  bundled ??= (async () => {
    const dir = mkdtempSync(join(process.env['BKS_TEST_TMP'] ?? tmpdir(), 'bks-bundle-'));
    const outfile = join(dir, 'controller.mjs');
    await bundleController({ outfile });
    return outfile;
  })();
  return bundled;
}

/** A controller process running the bundle. */
export class ControllerProcess {
  readonly child: ChildProcess;
  readonly #lines: string[] = [];
  readonly #exited: Promise<number | null>;

  private constructor(child: ChildProcess) {
    this.child = child;
    let buffered = '';
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('utf8');
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      this.#lines.push(...parts.filter((l) => l.length > 0));
      if (process.env['E2E_CONTROLLER_LOGS']) for (const l of parts) process.stderr.write(`[controller ${child.pid}] ${l}\n`);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    this.#exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))));
  }

  /**
   * Starts `node <nodeArgs> <bundle> <args>`, by default with the image's V8 flags, so tests run the
   * process the image runs; health and metrics listen on ephemeral ports unless `args` say otherwise.
   */
  static start(bundle: string, args: readonly string[], nodeArgs: readonly string[] = CONTROLLER_NODE_FLAGS): ControllerProcess {
    const defaults = ['--metrics-bind-address=127.0.0.1:0', '--health-probe-bind-address=127.0.0.1:0', '--log-level=debug'];
    const child = spawn(process.execPath, [...nodeArgs, bundle, ...defaults, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    return new ControllerProcess(child);
  }

  /** Follows the log of a controller started some other way (in a container: test/image/container.ts). */
  static attach(child: ChildProcess): ControllerProcess {
    return new ControllerProcess(child);
  }

  /** Every log line so far. */
  get lines(): readonly string[] {
    return this.#lines;
  }

  /** Log lines parsed as JSON (non-JSON lines skipped). */
  records(): Record<string, unknown>[] {
    return this.#lines.flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }

  /** Resolves with the exit code once the process exits. */
  exited(): Promise<number | null> {
    return this.#exited;
  }

  /** Waits for a log record matching `match`. */
  waitForLog(what: string, match: (record: Record<string, unknown>) => boolean, timeoutMs = 20_000): Promise<Record<string, unknown>> {
    return waitFor(what, () => this.records().find(match), timeoutMs).catch((err: Error) => {
      throw new Error(`${err.message}\n--- controller log ---\n${this.#lines.slice(-40).join('\n')}`);
    });
  }

  /** Runs `step`, failing at once when the process exits (an OOM aborts it with 134) instead of at a timeout. */
  async whileAlive<T>(what: string, step: () => Promise<T>): Promise<T> {
    const died = this.#exited.then((code) => Promise.reject(new Error(`the controller exited with ${code} during ${what}:\n${this.#lines.slice(-15).join('\n')}`)));
    died.catch(() => undefined); // it also rejects at the normal stop, after the race is over
    return Promise.race([step(), died]);
  }

  /** `host:port` of the conversion webhook (started with `--conversion-webhook-bind-address`), once it listens. */
  async webhookAddress(): Promise<string> {
    const record = await this.waitForLog('the conversion webhook to listen', (r) => r['msg'] === 'conversion webhook listening');
    return new URL(String(record['url'])).host;
  }

  /** Sends `signal` (SIGTERM by default) and resolves with the exit code. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.#exited;
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    try {
      return await this.#exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
