/**
 * The controller process, assembled from src/runtime: REST client (every write through the leader
 * election gate), one informer per kind and watched namespace, the BackupSchedule reconciler on a
 * controller loop, leader election on the Lease from dist/ (a replica that loses it pauses its workers
 * and campaigns again), `/metrics`, `/healthz` and `/readyz`, the conversion webhook on every replica
 * when `--conversion-webhook-bind-address` is set, and graceful shutdown (stop intake, finish in-flight reconciles within a deadline, release the Lease,
 * close watches).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { CRD_NAME } from '../api/index.ts';
import { isNotFound } from '../kube/api-status-error.ts';
import { missingFeatures, parseKubeVersion, type KubeVersion } from '../pure/cluster-features.ts';
import { childName, LABEL_MANAGED_BY, OPERATOR_NAME, OPERATOR_VERSION } from '../pure/index.ts';
import { gateWrites, KubeClient } from '../kube/kube-client.ts';
import type { KubeConfig } from '../kube/kube-config.ts';
import { objectKey, type KubeObject } from '../kube/object.ts';
import { ResourceClient, type ResourceType } from '../kube/resource-client.ts';
import type { Clock } from '../runtime/clock.ts';
import { realClock } from '../runtime/clock.ts';
import { Controller } from '../runtime/controller.ts';
import { cachesSyncedCheck, leaderElectionCheck, leaseReachableCheck, startHealthServer, watchesHealthyCheck, type HealthCheck } from '../runtime/health.ts';
import type { RunningServer } from '../runtime/http-server.ts';
import { Informer } from '../runtime/informer.ts';
import { LeaderElector } from '../runtime/leader-elector.ts';
import { createLeaseLock, type LeaseObject } from '../runtime/lease-lock.ts';
import type { Logger } from '../runtime/logger.ts';
import { RuntimeMetrics } from '../runtime/metrics.ts';
import { startMetricsServer } from '../runtime/metrics-server.ts';
import { openWriteGate } from '../runtime/write-gate.ts';
import type { SecretObject } from '../runtime/certificate-manager.ts';
import type { RunningConversionWebhook } from './conversion-webhook-server.ts';
import { BackupScheduleReconciler } from './backupschedule-reconciler.ts';
import type { ControllerOptions } from './cli-options.ts';
import { eventsDroppedCounter } from './controller-metrics.ts';
import { KubeEventRecorder } from './event-recorder.ts';
import { HeapCompactor } from './heap-compactor.ts';
import { ownerScheduleKey, scheduleKey, stripCronJob, stripSchedule } from './event-mapping.ts';
import { OwnStatusWrites } from './own-status-writes.ts';
import { BACKUP_SCHEDULES, CRON_JOBS, EVENTS, type BackupScheduleObject } from './resources.ts';

/** Timeout of each Lease request: half the elector's default renew deadline (10 s). */
const LEASE_REQUEST_TIMEOUT_MS = 5_000;

/** The controller's name: metrics label, queue name, log field. */
export const CONTROLLER_NAME = 'backupschedule';

const LEASES: ResourceType = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true };
const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true };
const CRDS: ResourceType = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false };

/** Index of the BackupSchedule caches: `namespace/<child CronJob name>` → the schedule. */
const CHILD_NAME_INDEX = 'child-name';

/**
 * The CronJob informer's selector: only the operator's children are listed, watched and cached, so
 * CronJobs anyone else creates cost nothing. A child whose labels were removed drops out of the cache;
 * reconcile then meets it through AlreadyExists and one GET, and its heal restores the labels.
 */
export const CHILD_SELECTOR = `${LABEL_MANAGED_BY}=${OPERATOR_NAME}`;

/**
 * LIST page size of both informers. A page is read whole before it is parsed, so the page is what the
 * start-up LIST holds at once: client-go's 500 objects of up to ~256 KiB of annotations each is 125 MB
 * of JSON, beyond the controller's whole heap (src/controller/node-flags.ts). Measured with 750
 * schedules of 250 KiB (test/e2e/large-objects.test.ts), peak RSS of a restart: 500 → out of memory,
 * 100 → 283 MiB, 50 → 221–238 MiB, 20 → 163 MiB (the limit is 320 MiB). 10,000 small schedules take 500
 * pages instead of 20: a few seconds more at start-up, for a bound that holds whatever users annotate.
 */
export const LIST_PAGE_SIZE = 20;

/** A running operator. */
export interface RunningOperator {
  /** The health server's URL, when serving. */
  readonly healthUrl: string | undefined;
  /** The metrics server's URL, when serving. */
  readonly metricsUrl: string | undefined;
  /** The conversion webhook's URL (`https://…`, path `/convert`), when serving. */
  readonly conversionWebhookUrl: string | undefined;
  /** Resolves when the process should exit, with the exit code (caches never synced…). */
  readonly failed: Promise<number>;
  /** Graceful shutdown; resolves once everything is closed. */
  shutdown(): Promise<void>;
}

/** What {@link startOperator} needs besides the flags. */
export interface OperatorEnvironment {
  /** Where the API server is and how to authenticate. */
  readonly config: KubeConfig;
  /** Whether `config` came from the pod's service account (decides the default Lease namespace). */
  readonly inCluster: boolean;
  readonly logger: Logger;
  /** @default realClock */
  readonly clock?: Clock;
}

/** One informer per watched namespace (or one for all namespaces), read as one cache. */
class NamespacedInformers<T extends KubeObject> {
  readonly #byNamespace = new Map<string | undefined, Informer<T>>();

  constructor(namespaces: readonly string[], make: (namespace: string | undefined) => Informer<T>) {
    for (const ns of namespaces.length > 0 ? namespaces : [undefined]) this.#byNamespace.set(ns, make(ns));
  }

  get all(): Informer<T>[] {
    return [...this.#byNamespace.values()];
  }

  #informerFor(namespace: string | undefined): Informer<T> | undefined {
    return this.#byNamespace.get(namespace) ?? this.#byNamespace.get(undefined);
  }

  get(key: string): T | undefined {
    const namespace = key.includes('/') ? key.slice(0, key.indexOf('/')) : undefined;
    return this.#informerFor(namespace)?.store.get(key);
  }

  byIndex(index: string, namespace: string | undefined, value: string): T[] {
    return this.#informerFor(namespace)?.store.byIndex(index, value) ?? [];
  }
}

/**
 * Whether a BackupSchedule update is reconciled whoever made it (controller-runtime's
 * GenerationChangedPredicate, without its flaw of swallowing resyncs): a new generation, uid or
 * deletion. Resyncs deliver the same object twice and always pass. Any other update (status or
 * metadata only) keeps `generation`; it is reconciled unless it is the controller's own status write
 * coming back ({@link OwnStatusWrites}), so a status someone else wrote is corrected at once.
 */
export function needsReconcile(old: KubeObject, updated: KubeObject): boolean {
  return (
    old === updated ||
    old.metadata.generation !== updated.metadata.generation ||
    old.metadata.uid !== updated.metadata.uid ||
    old.metadata.deletionTimestamp !== updated.metadata.deletionTimestamp
  );
}

/** A start-up step's failure as an {@link OperatorStartError} naming the flag behind it. */
async function withFlag<T>(flag: string, step: Promise<T>): Promise<T> {
  try {
    return await step;
  } catch (err) {
    throw new OperatorStartError(`${flag}: ${(err as Error).message}`, { cause: err });
  }
}

/** The operator could not start for a reason the user can fix (a busy port…); the message says which. */
export class OperatorStartError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'OperatorStartError';
  }
}

/**
 * Reads the API server's `/version` (every authenticated user may: `system:public-info-viewer`) and logs
 * a warning for each feature the operator uses that this version lacks. Never fails start-up: an
 * unreadable version is logged and treated as unknown.
 */
export async function checkServerVersion(
  client: Pick<KubeClient, 'request'>,
  logger: { info(fields: object, message: string): void; warn(fields: object, message: string): void },
): Promise<KubeVersion | undefined> {
  let version: KubeVersion | undefined;
  try {
    version = parseKubeVersion(await client.request<unknown>('GET', '/version', { timeoutMs: 10_000 }));
  } catch (err) {
    logger.warn({ err: String(err) }, 'cannot read the API server version; features the cluster may lack are not checked');
    return undefined;
  }
  if (!version) {
    logger.warn({}, 'the API server /version names no Kubernetes version; features the cluster may lack are not checked');
    return undefined;
  }
  const missing = missingFeatures(version);
  logger.info({ serverVersion: version.gitVersion, major: version.major, minor: version.minor }, 'API server version');
  for (const feature of missing) {
    logger.warn({ serverVersion: version.gitVersion, feature: feature.name, since: `1.${feature.sinceMinor}` }, `the cluster lacks ${feature.name}: ${feature.without}`);
  }
  return version;
}

/**
 * Reads discovery for the group version the controller watches (`/apis/kubelings.dev/v1`, readable by
 * every authenticated user: `system:discovery`) and logs an error saying what to do when the CRD does not
 * serve it yet: a release's controller applied without its CRD (the informers then retry, and start-up
 * fails once the cache-sync timeout passes). Never fails start-up itself: GitOps may apply the CRD a
 * moment later.
 */
export async function checkServedVersion(
  client: Pick<KubeClient, 'request'>,
  logger: { error(fields: object, message: string): void; warn(fields: object, message: string): void },
): Promise<void> {
  const path = `/apis/${BACKUP_SCHEDULES.group}/${BACKUP_SCHEDULES.version}`;
  try {
    await client.request<unknown>('GET', path, { timeoutMs: 10_000 });
  } catch (err) {
    if (isNotFound(err)) {
      logger.error({ crd: CRD_NAME, path }, `the API server does not serve ${BACKUP_SCHEDULES.group}/${BACKUP_SCHEDULES.version}, the version this controller reads: apply this release's CRD (dist/, before the Deployment; README "Upgrading")`);
    } else {
      logger.warn({ err: String(err), path }, 'cannot read discovery; whether the CRD serves the version this controller reads is not checked');
    }
  }
}

/** Starts everything; see the module doc. */
export async function startOperator(options: ControllerOptions, env: OperatorEnvironment): Promise<RunningOperator> {
  const { config, logger } = env;
  const clock = env.clock ?? realClock;
  const metrics = new RuntimeMetrics();
  const identity = options.identity ?? `${hostname()}_${randomUUID()}`;
  const userAgent = `backupschedule-operator/${OPERATOR_VERSION}`;

  let failWith: (code: number) => void = () => {};
  const failed = new Promise<number>((resolve) => (failWith = resolve));

  let elector: LeaderElector | undefined;
  let onStartedLeading: () => void = () => {};
  const leaseNamespace = options.leaseNamespace ?? (env.inCluster ? config.namespace : 'backupschedule-system');
  if (options.leaderElect) {
    // The lock's own client must not pass the gate: the release is written with the gate closed.
    // Its requests time out at half the renew deadline (10 s): against an API server that accepts
    // connections but never answers, a renewal fails and is retried with a fresh GET before the
    // deadline, and the failing GET makes /readyz say so within seconds instead of after the
    // client's 30 s (kube-controller-manager bounds its leader-election client by the renew deadline too).
    const leaseClient = new KubeClient({ config, userAgent, onRequest: metrics.restClientObserver, timeoutMs: LEASE_REQUEST_TIMEOUT_MS });
    const leases = new ResourceClient<LeaseObject & KubeObject>(leaseClient, LEASES);
    elector = new LeaderElector({
      lock: createLeaseLock({
        namespace: leaseNamespace,
        name: options.leaseName,
        client: { get: (namespace, name) => leases.get({ namespace, name }), update: (lease) => leases.update(lease) },
      }),
      identity,
      clock,
      logger,
      metrics: metrics.leaderElection(options.leaseName),
      onNewLeader: (holder) => logger.info({ leader: holder, identity }, 'new leader observed'),
      onStartedLeading: () => onStartedLeading(),
    });
  }
  // Every write of the controller (children, status, Events) passes the leader's write gate.
  const client = new KubeClient({
    config,
    userAgent,
    onRequest: metrics.restClientObserver,
    beforeWrite: gateWrites(elector?.gate ?? openWriteGate),
  });

  const schedulesApi = new ResourceClient<BackupScheduleObject>(client, BACKUP_SCHEDULES);
  const cronJobsApi = new ResourceClient<KubeObject>(client, CRON_JOBS);
  const eventsApi = new ResourceClient<KubeObject>(client, EVENTS);

  const schedules = new NamespacedInformers<BackupScheduleObject>(options.namespaces, (namespace) => {
    const informer = new Informer<BackupScheduleObject>({
      name: `${CRD_NAME}${namespace ? `@${namespace}` : ''}`,
      source: schedulesApi,
      ...(namespace ? { namespace } : {}),
      transform: stripSchedule,
      pageSize: LIST_PAGE_SIZE,
      resyncPeriodMs: options.syncPeriodMs,
      clock,
      logger,
    });
    informer.store.addIndex(CHILD_NAME_INDEX, (s) => (s.metadata.name ? [objectKey({ namespace: s.metadata.namespace, name: childName(s) })] : []));
    return informer;
  });
  const cronJobs = new NamespacedInformers<KubeObject>(options.namespaces, (namespace) =>
    new Informer<KubeObject>({
      name: `cronjobs.batch${namespace ? `@${namespace}` : ''}`,
      source: cronJobsApi,
      ...(namespace ? { namespace } : {}),
      transform: stripCronJob,
      labelSelector: CHILD_SELECTOR,
      pageSize: LIST_PAGE_SIZE,
      // No resync of its own: the schedules' resync reconciles every schedule, each looking at its child.
      resyncPeriodMs: 0,
      clock,
      logger,
    }),
  );
  const informers = [...schedules.all, ...cronJobs.all];

  const countDroppedEvent = eventsDroppedCounter(metrics.registry);
  // The recorder is built before the controller it defers to.
  let controllerRef: Controller | undefined;
  const events = new KubeEventRecorder({
    writer: {
      create: (event) => eventsApi.create(event),
      patch: (ref, patch) => eventsApi.patch(ref, patch, { type: 'merge' }),
    },
    instance: identity,
    clock,
    onError: (err, event) => logger.warn({ err: String(err), event: objectKey(event.metadata) }, 'could not record event'),
    // Counted, and logged only at debug: a mass creation drops thousands by design.
    onDrop: (event, why) => {
      countDroppedEvent(why);
      logger.debug({ reason: event.reason, why }, 'event dropped');
    },
    // Reconcile writes first: Events wait while keys are queued or being reconciled (at most 30 s).
    deferWhile: () => controllerRef !== undefined && (controllerRef.activeWorkers > 0 || controllerRef.queue.len() > 0),
  });
  let serverVersion: KubeVersion | undefined;
  // Read before the workers start (they start after the caches sync); the reconciler only uses it for messages.
  const versionChecked = checkServerVersion(client, logger).then((v) => (serverVersion = v));
  void checkServedVersion(client, logger);
  const reconciler = new BackupScheduleReconciler({
    schedules,
    cronJobs,
    writes: {
      createCronJob: (cronJob) => cronJobsApi.create(cronJob),
      getCronJob: (ref) => cronJobsApi.get(ref),
      patchCronJob: (ref, patch) => cronJobsApi.patch(ref, patch, { type: 'merge' }),
      updateScheduleStatus: (schedule) => ownStatusWrites.track(scheduleKey(schedule), () => schedulesApi.updateStatus(schedule), (stored) => stored.metadata?.resourceVersion),
    },
    events,
    backupImage: options.backupImage,
    allowedImages: options.allowedBackupImages,
    allowedEndpoints: options.allowedBackupEndpoints,
    serverVersion: () => serverVersion,
    clock,
    logger,
  });
  const controller = new Controller({
    name: CONTROLLER_NAME,
    reconciler: {
      reconcile: (ctx) => {
        compactor.reconciled();
        return reconciler.reconcile(ctx.key);
      },
    },
    concurrency: options.concurrency,
    informers,
    logger,
    metrics,
    workQueueMetrics: metrics.workQueue,
    clock,
  });
  const queue = controller.queue;
  controllerRef = controller;
  // Status-only updates not written by this controller are reconciled: a foreign status is corrected at once.
  const ownStatusWrites = new OwnStatusWrites((key) => queue.add(key));
  const compactor = new HeapCompactor({
    idle: () => controller.activeWorkers === 0 && queue.len() === 0,
    clock,
    onCompacted: (reconciles, durationMs) => {
      const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
      const mib = (bytes: number): number => Math.round(bytes / 2 ** 20);
      logger.info(
        { reconciles, durationMs: Math.round(durationMs), rssMiB: mib(rss), heapTotalMiB: mib(heapTotal), heapUsedMiB: mib(heapUsed), externalMiB: mib(external), arrayBuffersMiB: mib(arrayBuffers) },
        'heap compacted after a burst of reconciles',
      );
    },
  });

  for (const informer of schedules.all) {
    informer.addEventHandler({
      onAdd: (s) => queue.add(scheduleKey(s)),
      onUpdate: (old, s) => {
        const key = scheduleKey(s);
        if (needsReconcile(old, s) || ownStatusWrites.isForeign(key, s.metadata.resourceVersion)) queue.add(key);
      },
      onDelete: (s) => {
        const key = scheduleKey(s);
        ownStatusWrites.forget(key);
        queue.add(key);
      },
    });
  }
  // A CronJob event concerns its controlling BackupSchedule, and also the schedule whose child name it
  // carries: that is how a schedule in ChildNameConflict hears that a labelled CronJob (a previous
  // incarnation's child) went away. Unlabelled foreign CronJobs are not watched: reconcile rechecks those.
  const enqueueForCronJob = (cronJob: KubeObject): void => {
    const owner = ownerScheduleKey(cronJob);
    if (owner) queue.add(owner);
    const namespace = cronJob.metadata.namespace;
    for (const s of schedules.byIndex(CHILD_NAME_INDEX, namespace, objectKey(cronJob.metadata))) {
      const key = scheduleKey(s);
      if (key !== owner) queue.add(key);
    }
  };
  for (const informer of cronJobs.all) {
    informer.addEventHandler({
      onAdd: enqueueForCronJob,
      onUpdate: (old, cronJob) => {
        const oldOwner = ownerScheduleKey(old);
        if (oldOwner && oldOwner !== ownerScheduleKey(cronJob)) queue.add(oldOwner);
        enqueueForCronJob(cronJob);
      },
      onDelete: enqueueForCronJob,
    });
  }

  const healthz: HealthCheck[] = [watchesHealthyCheck(informers, { clock })];
  if (elector) healthz.push(leaderElectionCheck(elector));
  const servers: RunningServer[] = [];
  const readyz: HealthCheck[] = [cachesSyncedCheck(informers)];
  if (elector) readyz.push(leaseReachableCheck(elector));
  const metricsServer = options.metricsAddress
    ? await withFlag('--metrics-bind-address', startMetricsServer(options.metricsAddress, metrics.registry))
    : undefined;
  if (metricsServer) servers.push(metricsServer);
  // Every replica serves conversions; the certificate Secret and the CRD's caBundle are written by the
  // leader, and by a follower only while the Secret holds nothing servable (CertificateManager says
  // why), so this client is not behind the leader's write gate: each of its writes is conditional. With
  // --conversion-webhook-cert-dir, cert-manager keeps both: every replica only reads the mounted files.
  let webhook: RunningConversionWebhook | undefined;
  let webhookClient: KubeClient | undefined;
  if (options.conversionWebhookAddress) {
    const gate = elector?.gate ?? openWriteGate;
    webhookClient = new KubeClient({ config, userAgent, onRequest: metrics.restClientObserver });
    // Loaded only when asked for: node-forge and the certificate code stay out of a controller without it.
    const [{ startConversionWebhook }, { certificateLoadedCheck }] = await Promise.all([import('./conversion-webhook-server.ts'), import('../runtime/certificate-manager.ts')]);
    const common = { address: options.conversionWebhookAddress, clock, logger };
    webhook = await withFlag(
      '--conversion-webhook-bind-address',
      startConversionWebhook(
        options.conversionWebhookCertDir !== undefined
          ? { ...common, certDir: options.conversionWebhookCertDir }
          : {
              ...common,
              namespace: leaseNamespace,
              serviceName: options.conversionWebhookServiceName,
              secretName: options.conversionWebhookSecretName,
              secrets: new ResourceClient<SecretObject>(webhookClient, SECRETS),
              crds: new ResourceClient<KubeObject>(webhookClient, CRDS),
              isLeader: () => gate.isOpen(),
            },
      ),
    ).catch(async (err: unknown) => {
      await Promise.all(servers.map((s) => s.close()));
      throw err;
    });
    servers.push(webhook);
    // Not ready (out of the Service's endpoints) until it has a certificate to serve.
    readyz.push(certificateLoadedCheck(webhook.certificates));
  }
  const healthServer = options.healthAddress
    ? await withFlag('--health-probe-bind-address', startHealthServer({ address: options.healthAddress, healthz, readyz })).catch(async (err: unknown) => {
        await Promise.all(servers.map((s) => s.close()));
        throw err;
      })
    : undefined;
  if (healthServer) servers.push(healthServer);
  logger.info({ metrics: metricsServer?.url, health: healthServer?.url, conversionWebhook: webhook?.url, namespaces: options.namespaces.length > 0 ? options.namespaces : 'all', identity }, 'starting');

  for (const informer of informers) informer.start();

  let shuttingDown = false;
  const startWorkers = (): void => {
    versionChecked.then(() => controller.start()).then(() => compactor.start(), (err: unknown) => {
      logger.error({ err }, 'controller failed to start');
      failWith(1);
    });
  };
  const electorStop = new AbortController();
  let electorDone: Promise<void> = Promise.resolve();
  if (elector) {
    const e = elector;
    let workersStarted = false;
    // Losing the Lease (renewals failing through an API outage, or another holder) closes the write
    // gate at once; the workers pause, the caches stay warm, and this replica campaigns again. Exiting
    // instead (controller-runtime's way) would restart every replica at once during an API server
    // upgrade, each starting over with a full LIST.
    electorDone = (async () => {
      while (!shuttingDown) {
        try {
          await e.run(electorStop.signal);
        } catch (err) {
          logger.error({ err }, 'leader election failed');
          failWith(1);
          return;
        }
        if (shuttingDown) return;
        logger.warn({ identity }, 'leader election lost; pausing workers and campaigning again');
        await controller.pause();
      }
    })();
    // Workers start once we lead; the informers warm the caches meanwhile.
    onStartedLeading = () => {
      if (shuttingDown) return;
      logger.info({ identity }, 'became leader; starting workers');
      void webhook?.certificates.sync();
      if (!workersStarted) {
        workersStarted = true;
        startWorkers();
        return;
      }
      // Another leader may have acted meanwhile: every schedule is looked at again, as after a restart.
      for (const informer of schedules.all) for (const key of informer.store.keys()) queue.add(key);
      controller.resume();
    };
  } else {
    startWorkers();
  }

  return {
    healthUrl: healthServer?.url,
    metricsUrl: metricsServer?.url,
    conversionWebhookUrl: webhook?.url,
    failed,
    async shutdown() {
      if (shuttingDown) return;
      shuttingDown = true;
      logger.info({}, 'shutting down: stopping intake, finishing in-flight reconciles');
      compactor.stop();
      const inTime = await controller.stop(options.shutdownTimeoutSeconds * 1000);
      if (!inTime) logger.warn({ deadlineSeconds: options.shutdownTimeoutSeconds }, 'reconciles still in flight at the shutdown deadline');
      // Pending Events get a short grace period; they are best effort and must not hold shutdown up.
      await Promise.race([events.flush(), clock.sleep(2_000)]);
      // Aborting the elector releases the Lease (empty holder) so the next replica takes over at once.
      electorStop.abort();
      await electorDone;
      await Promise.all(informers.map((i) => i.stop()));
      await Promise.all(servers.map((s) => s.close()));
      client.close();
      webhookClient?.close();
      logger.info({}, 'shutdown complete');
    },
  };
}
