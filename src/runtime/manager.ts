/**
 * The process that hosts controllers (controller-runtime's `Manager`): one REST client whose writes pass
 * the leader's write gate, informers shared between the controllers (one per resource, namespace and
 * label selector, whoever asks first builds it; each keeps what its cache policy allows,
 * src/runtime/cache-policy.ts, and may wait for its resource to be served), leader election, `/metrics`, `/healthz` and `/readyz`,
 * and the ordered shutdown (stop intake, finish in-flight reconciles within a deadline, flush, release
 * the Lease, close watches and servers). It knows no resource of its own: controllers are added with
 * {@link Manager.add} and ask it for the informers they need.
 */
import { gateWrites, KubeClient } from '../kube/kube-client.ts';
import type { KubeConfig } from '../kube/kube-config.ts';
import type { KubeObject } from '../kube/object.ts';
import { ResourceClient, type ResourceType } from '../kube/resource-client.ts';
import { realClock, type Clock } from './clock.ts';
import { cachesSyncedCheck, leaderElectionCheck, leaseReachableCheck, startHealthServer, watchesHealthyCheck, type HealthCheck } from './health.ts';
import type { BindAddress, RunningServer } from './http-server.ts';
import { budgetedTransform, checkCachePolicy, type CachePolicy } from './cache-policy.ts';
import { Informer } from './informer.ts';
import type { PageGrowth } from './list-watch-source.ts';
import { LeaderElector } from './leader-elector.ts';
import { createLeaseLock, type LeaseObject } from './lease-lock.ts';
import type { Logger } from './logger.ts';
import { RuntimeMetrics } from './metrics.ts';
import { startMetricsServer } from './metrics-server.ts';
import { NamespacedInformers } from './namespaced-informers.ts';
import { openWriteGate, type WriteGate } from './write-gate.ts';

const LEASES: ResourceType = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true };

/** A controller the manager runs: started once this replica leads, paused while it does not. */
export interface ManagedController {
  /** Name in logs. */
  readonly name: string;
  /** Waits for its caches and starts its workers; a rejection makes the process exit 1. */
  start(): Promise<void>;
  /** Stops taking keys (the Lease was lost); its caches stay warm. */
  pause(): Promise<void>;
  /** Leads again: look at every object anew (another leader may have acted meanwhile) and take keys again. */
  resume(): void;
  /** Stops intake, finishes in-flight reconciles within `deadlineMs`; resolves `true` if they finished. */
  stop(deadlineMs: number): Promise<boolean>;
}

/** What an informer is built from; two requests with the same resource, namespace and selector share one. */
export interface InformerSpec<T extends KubeObject> {
  readonly resource: ResourceType;
  /** @default all namespaces */
  readonly namespace?: string;
  /** @default none */
  readonly labelSelector?: string;
  /**
   * What the cache keeps of each object (src/runtime/cache-policy.ts): required, so no informer caches
   * objects whole; every requester of a shared informer must pass the same policy object.
   */
  readonly cache: CachePolicy<T>;
  /** @default the manager's `syncPeriodMs` */
  readonly resyncPeriodMs?: number;
  /**
   * Resolves when the informer may start (its resource is served: a CRD installed after the operator);
   * the manager starts it then, and aborts `signal` at shutdown. Every requester of a shared informer
   * must pass the same function. @default started with the manager
   */
  readonly startAfter?: (signal: AbortSignal) => Promise<void>;
}

/** Options for {@link Manager}. */
export interface ManagerOptions {
  readonly config: KubeConfig;
  readonly userAgent: string;
  /** This replica's identity in the Lease. */
  readonly identity: string;
  /** Leader election on this Lease; without it every write is allowed at once. */
  readonly leaderElection?: {
    readonly namespace: string;
    readonly name: string;
    /** Timeout of each Lease request. */
    readonly requestTimeoutMs: number;
  };
  /** `/metrics` address. @default not served */
  readonly metricsAddress?: BindAddress;
  /** `/healthz` and `/readyz` address. @default not served */
  readonly healthAddress?: BindAddress;
  /** LIST page size of every informer. */
  readonly pageSize: number;
  /** How far its pages may grow while their answers stay small. @default none */
  readonly pageGrowth?: PageGrowth;
  /** Default resync period of the informers. */
  readonly syncPeriodMs: number;
  /** @default a new registry with the runtime's metrics */
  readonly metrics?: RuntimeMetrics;
  /** @default realClock */
  readonly clock?: Clock;
  readonly logger: Logger;
}

/** A server failed to start; `server` says which (the caller names the flag behind it). */
export class ManagerServerError extends Error {
  readonly server: 'metrics' | 'health';
  constructor(server: 'metrics' | 'health', cause: unknown) {
    super((cause as Error).message, { cause });
    this.name = 'ManagerServerError';
    this.server = server;
  }
}

/** Hosts controllers over shared informers; see the module doc. */
export class Manager {
  /** Every write passes the leader's write gate. */
  readonly client: KubeClient;
  readonly metrics: RuntimeMetrics;
  readonly elector: LeaderElector | undefined;
  /** Open while this replica leads (always open without leader election). */
  readonly gate: WriteGate;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Resolves with an exit code when the process should exit (caches never synced, election failed). */
  readonly failed: Promise<number>;
  readonly #options: ManagerOptions;
  readonly #informers = new Map<string, { informer: Informer<KubeObject>; spec: InformerSpec<KubeObject>; resyncPeriodMs: number }>();
  readonly #controllers: ManagedController[] = [];
  readonly #readyChecks: HealthCheck[] = [];
  readonly #servers: RunningServer[] = [];
  readonly #onStartedLeading: (() => void)[] = [];
  readonly #flushes: (() => Promise<void>)[] = [];
  readonly #closers: (() => void)[] = [];
  #failWith: (code: number) => void = () => {};
  #started = false;
  #shuttingDown = false;
  #electorDone: Promise<void> = Promise.resolve();
  readonly #electorStop = new AbortController();
  /** Aborted when shutdown begins: informers still waiting to start never do. */
  readonly #stopping = new AbortController();

  constructor(options: ManagerOptions) {
    this.#options = options;
    this.clock = options.clock ?? realClock;
    this.logger = options.logger;
    this.metrics = options.metrics ?? new RuntimeMetrics();
    this.failed = new Promise<number>((resolve) => (this.#failWith = resolve));
    const { config, userAgent } = options;
    const election = options.leaderElection;
    if (election) {
      // The lock's own client must not pass the gate: the release is written with the gate closed. Its
      // requests time out at `requestTimeoutMs`: against an API server that accepts connections but never
      // answers, a renewal fails and is retried with a fresh GET before the renew deadline, and the failing
      // GET makes /readyz say so within seconds (kube-controller-manager bounds its election client too).
      const leaseClient = new KubeClient({ config, userAgent, onRequest: this.metrics.restClientObserver, timeoutMs: election.requestTimeoutMs });
      const leases = new ResourceClient<LeaseObject & KubeObject>(leaseClient, LEASES);
      this.elector = new LeaderElector({
        lock: createLeaseLock({
          namespace: election.namespace,
          name: election.name,
          client: { get: (namespace, name) => leases.get({ namespace, name }), update: (lease) => leases.update(lease) },
        }),
        identity: options.identity,
        clock: this.clock,
        logger: this.logger,
        metrics: this.metrics.leaderElection(election.name),
        onNewLeader: (holder) => this.logger.info({ leader: holder, identity: options.identity }, 'new leader observed'),
        onStartedLeading: () => this.#startedLeading(),
      });
    }
    this.gate = this.elector?.gate ?? openWriteGate;
    this.client = new KubeClient({ config, userAgent, onRequest: this.metrics.restClientObserver, beforeWrite: gateWrites(this.gate) });
  }

  /**
   * The informer of `spec`, shared: a second request with the same resource, namespace and label
   * selector gets the first one's informer (and must ask for the same transform, since the cache holds
   * only what it keeps). Handlers and indexes are added by the requesters.
   */
  informer<T extends KubeObject>(spec: InformerSpec<T>): Informer<T> {
    if (this.#started) throw new Error('manager: informers must be requested before start()');
    const { group, version, plural } = spec.resource;
    const key = `${group}/${version}/${plural}|${spec.namespace ?? ''}|${spec.labelSelector ?? ''}`;
    const name = `${plural}${group ? `.${group}` : ''}${spec.namespace ? `@${spec.namespace}` : ''}`;
    checkCachePolicy(spec.cache as CachePolicy<T> | undefined, name);
    const resyncPeriodMs = spec.resyncPeriodMs ?? this.#options.syncPeriodMs;
    const existing = this.#informers.get(key);
    if (existing) {
      // The cache holds only what its policy keeps: a second requester must read what it asked for.
      if (existing.spec.cache !== (spec.cache as unknown)) throw new Error(`manager: informer ${key} is shared and was requested with another cache policy`);
      // One informer has one resync period: a second requester must not silently get the first one's.
      if (existing.resyncPeriodMs !== resyncPeriodMs) throw new Error(`manager: informer ${key} is shared and was requested with another resync period (${resyncPeriodMs} ms, not ${existing.resyncPeriodMs} ms)`);
      if (existing.spec.startAfter !== (spec.startAfter as unknown)) throw new Error(`manager: informer ${key} is shared and was requested with another start condition`);
      return existing.informer as unknown as Informer<T>;
    }
    const informer = new Informer<T>({
      name,
      source: new ResourceClient<T>(this.client, spec.resource),
      ...(spec.namespace ? { namespace: spec.namespace } : {}),
      ...(spec.labelSelector ? { labelSelector: spec.labelSelector } : {}),
      transform: budgetedTransform(spec.cache),
      pageSize: this.#options.pageSize,
      ...(this.#options.pageGrowth ? { pageGrowth: this.#options.pageGrowth } : {}),
      resyncPeriodMs,
      clock: this.clock,
      logger: this.logger,
    });
    this.#informers.set(key, { informer: informer as unknown as Informer<KubeObject>, spec: spec as unknown as InformerSpec<KubeObject>, resyncPeriodMs });
    return informer;
  }

  /** One shared informer per namespace of `namespaces` (all namespaces when empty), read as one cache. */
  namespacedInformers<T extends KubeObject>(namespaces: readonly string[], spec: Omit<InformerSpec<T>, 'namespace'>): NamespacedInformers<T> {
    return new NamespacedInformers<T>(namespaces, (namespace) => this.informer<T>({ ...spec, ...(namespace ? { namespace } : {}) }));
  }

  /** Adds a controller: started once this replica leads, paused when it stops leading, stopped on shutdown. */
  add(controller: ManagedController): void {
    if (this.#started) throw new Error('manager: controllers must be added before start()');
    this.#controllers.push(controller);
  }

  /** A server started by the caller, closed on shutdown (after the Lease is released). */
  addServer(server: RunningServer): void {
    this.#servers.push(server);
  }

  /** A `/readyz` check besides the caches and the Lease. */
  addReadyCheck(check: HealthCheck): void {
    this.#readyChecks.push(check);
  }

  /** Called each time this replica becomes leader. */
  onStartedLeading(hook: () => void): void {
    this.#onStartedLeading.push(hook);
  }

  /** Best-effort work after the controllers stopped and before the Lease is released (pending Events), given 2 s in all. */
  addFlush(flush: () => Promise<void>): void {
    this.#flushes.push(flush);
  }

  /** Called last on shutdown (another client to close). */
  addCloser(close: () => void): void {
    this.#closers.push(close);
  }

  /** Every informer built so far. */
  get informers(): Informer<KubeObject>[] {
    return [...this.#informers.values()].map((i) => i.informer);
  }

  /** Every informer built so far with the spec it was built from (what it lists, watches and keeps). */
  get informerSpecs(): { readonly informer: Informer<KubeObject>; readonly spec: InformerSpec<KubeObject> }[] {
    return [...this.#informers.values()].map(({ informer, spec }) => ({ informer, spec }));
  }

  /**
   * Starts the metrics and health servers (a failure closes every server added and throws a
   * {@link ManagerServerError}), the informers, leader election and, once leading, the controllers.
   */
  async start(): Promise<{ readonly metricsUrl: string | undefined; readonly healthUrl: string | undefined }> {
    if (this.#started) throw new Error('manager: already started');
    this.#started = true;
    const informers = this.informers;
    const closeAll = async (err: unknown): Promise<never> => {
      await Promise.all(this.#servers.map((s) => s.close()));
      throw err;
    };
    const metricsServer = this.#options.metricsAddress
      ? await startMetricsServer(this.#options.metricsAddress, this.metrics).catch((err: unknown) => closeAll(new ManagerServerError('metrics', err)))
      : undefined;
    // Before the others: closed last is fine, but a failing health server must close it too.
    if (metricsServer) this.#servers.unshift(metricsServer);
    const healthz: HealthCheck[] = [watchesHealthyCheck(informers, { clock: this.clock })];
    const readyz: HealthCheck[] = [cachesSyncedCheck(informers)];
    if (this.elector) {
      healthz.push(leaderElectionCheck(this.elector));
      readyz.push(leaseReachableCheck(this.elector));
    }
    readyz.push(...this.#readyChecks);
    const healthServer = this.#options.healthAddress
      ? await startHealthServer({ address: this.#options.healthAddress, healthz, readyz }).catch((err: unknown) => closeAll(new ManagerServerError('health', err)))
      : undefined;
    if (healthServer) this.#servers.push(healthServer);

    for (const { informer, spec } of this.#informers.values()) {
      if (!spec.startAfter) {
        informer.start();
        continue;
      }
      // Rejects only when shutdown aborts it; the informer then stays unstarted.
      spec.startAfter(this.#stopping.signal).then(
        () => {
          if (!this.#shuttingDown) informer.start();
        },
        () => undefined,
      );
    }
    const elector = this.elector;
    if (elector) {
      // Losing the Lease (renewals failing through an API outage, or another holder) closes the write
      // gate at once; the workers pause, the caches stay warm, and this replica campaigns again. Exiting
      // instead (controller-runtime's way) would restart every replica at once during an API server
      // upgrade, each starting over with a full LIST.
      this.#electorDone = (async () => {
        while (!this.#shuttingDown) {
          try {
            await elector.run(this.#electorStop.signal);
          } catch (err) {
            this.logger.error({ err }, 'leader election failed');
            this.#failWith(1);
            return;
          }
          if (this.#shuttingDown) return;
          this.logger.warn({ identity: this.#options.identity }, 'leader election lost; pausing workers and campaigning again');
          await Promise.all(this.#controllers.map((c) => c.pause()));
        }
      })();
    } else {
      this.#startControllers();
    }
    return { metricsUrl: metricsServer?.url, healthUrl: healthServer?.url };
  }

  #workersStarted = false;

  #startControllers(): void {
    this.#workersStarted = true;
    for (const controller of this.#controllers) {
      controller.start().catch((err: unknown) => {
        this.logger.error({ err, controller: controller.name }, 'controller failed to start');
        this.#failWith(1);
      });
    }
  }

  #startedLeading(): void {
    if (this.#shuttingDown) return;
    this.logger.info({ identity: this.#options.identity }, 'became leader; starting workers');
    for (const hook of this.#onStartedLeading) hook();
    if (!this.#workersStarted) {
      this.#startControllers();
      return;
    }
    for (const controller of this.#controllers) controller.resume();
  }

  /** Graceful shutdown; resolves once everything is closed. `deadlineMs` bounds the in-flight reconciles. */
  async shutdown(deadlineMs: number): Promise<void> {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    this.#stopping.abort(new Error('manager shutting down'));
    this.logger.info({}, 'shutting down: stopping intake, finishing in-flight reconciles');
    const inTime = await Promise.all(this.#controllers.map((c) => c.stop(deadlineMs)));
    if (inTime.includes(false)) this.logger.warn({ deadlineSeconds: deadlineMs / 1000 }, 'reconciles still in flight at the shutdown deadline');
    // Best effort: pending Events must not hold shutdown up.
    await Promise.race([Promise.all(this.#flushes.map((f) => f())), this.clock.sleep(2_000)]);
    // Aborting the elector releases the Lease (empty holder) so the next replica takes over at once.
    this.#electorStop.abort();
    await this.#electorDone;
    await Promise.all(this.informers.map((i) => i.stop()));
    await Promise.all(this.#servers.map((s) => s.close()));
    this.client.close();
    for (const close of this.#closers) close();
    this.logger.info({}, 'shutdown complete');
  }
}
