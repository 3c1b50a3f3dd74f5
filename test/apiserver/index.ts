/**
 * A loopback Kubernetes API server for tests: start it in-process with {@link startTestApiServer},
 * point `@kubernetes/client-node` or `kubectl` at its kubeconfig.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { realClock } from '../../src/runtime/clock.ts';
import { TokenAuthenticator } from './auth.ts';
import { allocateServiceForCreate, keepServiceAllocation, prepareJobForCreate } from './builtins/index.ts';
import { CustomResourceConverter } from './conversion/index.ts';
import { CrdController } from './crd-controller.ts';
import { LoopDelayProbe } from './debug-endpoints.ts';
import { versionInfo } from './discovery.ts';
import { FaultInjector } from './faults/index.ts';
import { parseFieldSpec, type DroppedField, type FieldMutation } from './field-rewrites.ts';
import { GarbageCollector } from './garbage-collector.ts';
import { issueToken } from './handlers/token-request.ts';
import { createRequestHandler, type PipelineControls } from './http-server.ts';
import { createDualListener, SERVER_CERT_PEM } from './listener.ts';
import { kubeconfigYaml } from './kubeconfig.ts';
import { installNamespaceStrategy } from './namespace-strategy.ts';
import { RegistryStore } from './registry-store.ts';
import { RequestLog, type RequestLogEntry } from './request-log.ts';
import { ResourceRegistry } from './resource-registry.ts';
import { seedCluster } from './seed.ts';
import type { ServerContext } from './server-context.ts';
import { Storage } from './storage.ts';
import { customResourceDefaulter } from './storage-decoder.ts';
import { groupResourceKey } from './resource-type.ts';
import type { KubeObject } from '../../src/kube/object.ts';

export type { RequestLogEntry } from './request-log.ts';
export { FaultInjector, type FaultRule } from './faults/index.ts';
export { parseFieldSpec, type DroppedField, type FieldMutation } from './field-rewrites.ts';

/** Options of {@link startTestApiServer}. */
export interface TestApiServerOptions {
  /** TCP port; 0 picks a free one. @default 0 */
  readonly port?: number;
  /** Listen address. @default '127.0.0.1' */
  readonly host?: string;
  /** Events retained for watch replay (older resourceVersions get 410 Expired). @default 10_000 */
  readonly watchHistorySize?: number;
  /** Period of BOOKMARK events on watches with allowWatchBookmarks. @default 5_000 */
  readonly bookmarkIntervalMs?: number;
  /**
   * Run the OwnerReferencesPermissionEnforcement admission plugin (off in a default kube-apiserver,
   * on in e.g. OpenShift): `blockOwnerDeletion: true` then needs `update` on the owner's `finalizers`.
   * @default false
   */
  readonly enforceOwnerReferencePermissions?: boolean;
  /**
   * Fields the server does not keep on create and update, as an older server drops fields it does not
   * know or whose feature gate is off: `batch/cronjobs:spec.timeZone` behaves like Kubernetes before
   * 1.25. Strings as {@link parseFieldSpec} reads them, or parsed objects.
   * @default []
   */
  readonly dropFields?: readonly (string | DroppedField)[];
  /**
   * Mutating admission hooks: `batch/cronjobs:spec.suspend=true` sets that field on every create and
   * update of the kind, as a webhook rewriting it would (value as JSON, else a string).
   * @default []
   */
  readonly mutateFields?: readonly (string | FieldMutation)[];
  /** The version `/version` reports (`1.24.17`); behaviour stays that of 1.32. @default '1.32.0-kubelings-test' */
  readonly kubernetesVersion?: string;
  /**
   * Where conversion webhooks given as a Service are reached, since there is no cluster DNS:
   * `{ 'ns/name:443': '127.0.0.1:9443' }`. More can be added later with {@link TestApiServer.registerService}.
   * @default {}
   */
  readonly services?: Readonly<Record<string, string>>;
  /**
   * CRD validation ratcheting (on by default since Kubernetes 1.30): an update may keep invalid values
   * it does not change. `false` plays 1.28/1.29, where a status write of an invalid object fails 422.
   * @default true
   */
  readonly validationRatcheting?: boolean;
  /** Source of uniform numbers in [0, 1) for the fault injector's `fraction` rules (seed it to replay a run). @default Math.random */
  readonly faultRandom?: () => number;
}

/** Options of the generated kubeconfig. */
export interface KubeconfigOptions {
  /** Bearer token. @default the admin token, or a new token for `user` when given */
  readonly token?: string;
  /** Path of a file holding the bearer token (kubeconfig `tokenFile`, re-read by clients); replaces `token`. */
  readonly tokenFile?: string;
  /** User name for a new static token (groups: system:authenticated only) when no token is given. @default 'admin' */
  readonly user?: string;
  /** The context's default namespace. @default none */
  readonly namespace?: string;
}

/** A running test API server. */
export interface TestApiServer {
  /** Plain HTTP, e.g. `http://127.0.0.1:41234` (the same port also speaks HTTPS; see {@link httpsUrl}). */
  readonly url: string;
  /** `https://127.0.0.1:<port>`, what the kubeconfig uses (kubectl sends tokens only over TLS). */
  readonly httpsUrl: string;
  /** PEM of the server certificate, to trust as CA. */
  readonly caCertificate: string;
  /** Token of user `admin`, groups system:masters and system:authenticated. */
  readonly adminToken: string;
  /** A kubeconfig (YAML) pointing at this server. */
  kubeconfig(options?: KubeconfigOptions): string;
  writeKubeconfig(path: string, options?: KubeconfigOptions): Promise<void>;
  /** A token for the ServiceAccount, as the TokenRequest API issues it (the account must exist). @default expiry 3600 s */
  serviceAccountToken(namespace: string, name: string, expirationSeconds?: number): Promise<string>;
  /** A static token for a user with the given groups (plus system:authenticated). */
  userToken(name: string, groups?: readonly string[]): string;
  readonly faults: FaultInjector;
  readonly requestLog: Pick<RequestLog, 'entries' | 'count' | 'clear' | 'onEntry'>;
  /** Drops every retained event: watches from an older resourceVersion get the 410 ERROR event. */
  compactHistory(): void;
  /** Ends every open watch stream. */
  closeWatches(): void;
  /**
   * Makes the Service `namespace/name` port `port` reachable at `address` (`127.0.0.1:9443`) for
   * conversion webhooks; TLS is still checked against `<name>.<namespace>.svc`, as kube-apiserver does.
   */
  registerService(namespace: string, name: string, port: number, address: string): void;
  /**
   * Writes `obj` straight into storage, as `etcdctl put` would: no decoding, defaulting, pruning,
   * admission or validation (uid, creationTimestamp and generation 1 are set); watchers see it. Reads
   * decode it like any stored object (a custom resource gets its stored version's schema defaults).
   */
  storeUnvalidated(group: string, resource: string, obj: KubeObject): KubeObject;
  /**
   * The objects of `group`/`resource` exactly as stored, as `etcdctl get --prefix` shows them: a custom
   * resource keeps the `apiVersion` it was encoded in (its stored version), whatever version reads it.
   * Copies: editing them changes nothing stored.
   */
  listStored(group: string, resource: string): readonly KubeObject[];
  /** Requests hang until {@link resume}. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

/** Starts a server and resolves once it listens. */
export async function startTestApiServer(options: TestApiServerOptions = {}): Promise<TestApiServer> {
  const host = options.host ?? '127.0.0.1';
  const clock = realClock;
  const registry = new ResourceRegistry();
  const storage = new Storage(options.watchHistorySize ?? 10_000);
  // Custom resources read back with their stored version's schema defaults, as from kube's storage codec.
  storage.setDecoder(customResourceDefaulter(registry));
  const store = new RegistryStore(storage, clock, options.validationRatcheting ?? true);
  const auth = new TokenAuthenticator();
  const adminToken = `admin-${randomBytes(24).toString('base64url')}`;
  auth.addStaticToken(adminToken, { name: 'admin', groups: ['system:masters', 'system:authenticated'] });
  installNamespaceStrategy(store);
  store.setHooks('batch', 'jobs', { prepareCreate: prepareJobForCreate });
  store.setHooks('', 'services', { prepareCreate: allocateServiceForCreate, prepareUpdate: keepServiceAllocation });
  // SetDefaults_Secret: an empty type is Opaque.
  store.setHooks('', 'secrets', { prepareCreate: (obj) => void (obj['type'] ??= 'Opaque') });
  new CrdController(store, storage, registry, clock);
  const gc = new GarbageCollector(storage, store, registry, { clock });
  seedCluster(registry, store);
  const services = new Map<string, string>(Object.entries(options.services ?? {}));
  const converter = new CustomResourceConverter(storage, (namespace, name, port) => services.get(`${namespace}/${name}:${port}`));
  const ctx: ServerContext = {
    converter,
    registry, store, storage, clock, auth,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 5_000,
    enforceOwnerReferencePermissions: options.enforceOwnerReferencePermissions ?? false,
    droppedFields: (options.dropFields ?? []).map((f) => (typeof f === 'string' ? parseFieldSpec(f, false) : f)),
    fieldMutations: (options.mutateFields ?? []).map((f) => (typeof f === 'string' ? parseFieldSpec(f, true) : f)),
    versionInfo: versionInfo(options.kubernetesVersion),
  };

  const faults = new FaultInjector(options.faultRandom ? { random: options.faultRandom } : {});
  const log = new RequestLog();
  const loopDelay = new LoopDelayProbe();
  let paused: { promise: Promise<void>; release: () => void } | undefined;
  const controls: PipelineControls = {
    faults,
    log,
    loopDelay,
    gate: () => paused?.promise,
    pause: () => {
      if (paused) return;
      let release = (): void => {};
      const promise = new Promise<void>((resolve) => (release = resolve));
      paused = { promise, release };
    },
    resume: () => {
      paused?.release();
      paused = undefined;
    },
    compact: () => storage.hub.compact(storage.resourceVersion),
    closeWatches: () => storage.hub.closeAll(),
  };
  let address = '';
  const listener = createDualListener(createRequestHandler(ctx, controls, () => address));
  await new Promise<void>((resolve, reject) => {
    listener.tcp.once('error', reject);
    listener.tcp.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (listener.tcp.address() as AddressInfo).port;
  address = `${host}:${port}`;
  const url = `http://${address}`;
  const httpsUrl = `https://${address}`;

  const kubeconfig = (o: KubeconfigOptions = {}): string => {
    const user = o.user ?? 'admin';
    const token = o.token ?? (o.user && o.user !== 'admin' ? auth.mintUserToken(o.user, []) : adminToken);
    return kubeconfigYaml(httpsUrl, SERVER_CERT_PEM, user, o.tokenFile === undefined ? { token } : { tokenFile: o.tokenFile }, o.namespace);
  };

  return {
    url,
    httpsUrl,
    caCertificate: SERVER_CERT_PEM,
    adminToken,
    kubeconfig,
    writeKubeconfig: (path, o) => writeFile(path, kubeconfig(o), { mode: 0o600 }),
    serviceAccountToken: async (namespace, name, expirationSeconds) => issueToken(ctx, namespace, name, expirationSeconds).token,
    userToken: (name, groups = []) => auth.mintUserToken(name, groups),
    faults,
    requestLog: { entries: () => log.entries(), count: (match) => log.count(match), clear: () => log.clear(), onEntry: (listener) => log.onEntry(listener) },
    storeUnvalidated: (group, resource, obj) => {
      obj.metadata = { ...obj.metadata, uid: randomUUID(), creationTimestamp: new Date(clock.now()).toISOString().replace(/\.\d+Z$/, 'Z'), generation: 1 };
      return storage.create(groupResourceKey(group, resource), obj);
    },
    listStored: (group, resource) => structuredClone(storage.listRaw(groupResourceKey(group, resource))),
    compactHistory: controls.compact,
    closeWatches: controls.closeWatches,
    registerService: (namespace, name, port, address) => void services.set(`${namespace}/${name}:${port}`, address),
    pause: controls.pause,
    resume: controls.resume,
    stop: async () => {
      gc.stop();
      loopDelay.stop();
      converter.close();
      controls.resume();
      storage.hub.closeAll();
      await new Promise<void>((resolve) => {
        listener.tcp.close(() => resolve());
        listener.destroyAll();
      });
    },
  };
}
