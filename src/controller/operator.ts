/**
 * The controller process: a {@link Manager} (src/runtime/manager.ts: REST client with every write
 * through the leader election gate, shared informers, leader election on the Lease from dist/ — a
 * replica that loses it pauses its workers and campaigns again —, `/metrics`, `/healthz`, `/readyz`
 * and the ordered shutdown) hosting the controllers, each in its own folder (the BackupSchedule
 * controller: src/controller/backupschedule/), the Event recorder they share, the start-up checks of
 * the API server, and the conversion webhook on every replica when `--conversion-webhook-bind-address`
 * is set.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { CRD_NAME } from '../api/index.ts';
import { isNotFound } from '../kube/api-status-error.ts';
import { missingFeatures, parseKubeVersion, type KubeVersion } from '../pure/cluster-features.ts';
import { OPERATOR_VERSION } from '../pure/index.ts';
import { KubeClient } from '../kube/kube-client.ts';
import type { KubeConfig } from '../kube/kube-config.ts';
import { objectKey, type KubeObject } from '../kube/object.ts';
import { ResourceClient, type ResourceType } from '../kube/resource-client.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Logger } from '../runtime/logger.ts';
import { Manager, ManagerServerError } from '../runtime/manager.ts';
import type { SecretObject } from '../runtime/certificate-manager.ts';
import { addBackupScheduleController, type BackupScheduleController, type BackupScheduleControllerSetup } from './backupschedule/controller.ts';
import { addRestoreController } from './restore/controller.ts';
import { OutcomeMetrics } from './backupschedule/outcome-metrics.ts';
import type { RunningConversionWebhook } from './conversion-webhook-server.ts';
import type { ControllerOptions } from './cli-options.ts';
import { eventsDroppedCounter } from './controller-metrics.ts';
import { KubeEventRecorder } from './event-recorder.ts';
import { BACKUP_SCHEDULES, EVENTS } from './resources.ts';

/** Timeout of each Lease request: half the elector's default renew deadline (10 s). */
const LEASE_REQUEST_TIMEOUT_MS = 5_000;

const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true };
const CRDS: ResourceType = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false };

/**
 * LIST page size of both informers. A page is read whole before it is parsed, so the page is what the
 * start-up LIST holds at once: client-go's 500 objects of up to ~256 KiB of annotations each is 125 MB
 * of JSON, beyond the controller's whole heap (src/controller/node-flags.ts). Measured with 750
 * schedules of 250 KiB (test/e2e/large-objects.test.ts), peak RSS of a restart: 500 → out of memory,
 * 100 → 283 MiB, 50 → 221–238 MiB, 20 → 163 MiB (the limit is 320 MiB). It is the first page's size and
 * the floor; {@link LIST_PAGE_GROWTH} lets later pages of small objects grow.
 */
export const LIST_PAGE_SIZE = 20;

/**
 * Pages after the first double up to 500 objects (client-go's pager size) while each answer stays
 * within 4 MiB; one that passes it is read no further and asked again at 20, for the rest of that LIST
 * (src/runtime/list-watch-source.ts). So 10,000 small schedules are read in 24 pages, not 500 (4.6 s of a
 * 10,000-schedule start on a real kube-apiserver, docs/real-cluster.md), and large ones still 20 at a time.
 */
export const LIST_PAGE_GROWTH = { maxPageSize: 500, maxPageBytes: 4 * 2 ** 20 } as const;

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

/**
 * Adds the operator's controllers to `manager`, each with the informers it asks for (what
 * test/controller/informer-policies.test.ts walks); returns those whose busy work the Events wait for.
 */
export function addControllers(
  manager: Manager,
  options: ControllerOptions,
  setup: Pick<BackupScheduleControllerSetup, 'events' | 'serverVersionChecked' | 'serverVersion'>,
): BackupScheduleController[] {
  const statusObserver = new OutcomeMetrics(manager.metrics, manager.clock);
  const schedules = addBackupScheduleController(manager, { ...setup, options, statusObserver });
  addRestoreController(manager, options, setup.events);
  return [schedules];
}

/** Starts everything; see the module doc. */
export async function startOperator(options: ControllerOptions, env: OperatorEnvironment): Promise<RunningOperator> {
  const { config, logger } = env;
  const identity = options.identity ?? `${hostname()}_${randomUUID()}`;
  const userAgent = `backupschedule-operator/${OPERATOR_VERSION}`;
  const leaseNamespace = options.leaseNamespace ?? (env.inCluster ? config.namespace : 'backupschedule-system');
  const manager = new Manager({
    config,
    userAgent,
    identity,
    ...(options.leaderElect ? { leaderElection: { namespace: leaseNamespace, name: options.leaseName, requestTimeoutMs: LEASE_REQUEST_TIMEOUT_MS } } : {}),
    ...(options.metricsAddress ? { metricsAddress: options.metricsAddress } : {}),
    ...(options.healthAddress ? { healthAddress: options.healthAddress } : {}),
    pageSize: LIST_PAGE_SIZE,
    pageGrowth: LIST_PAGE_GROWTH,
    syncPeriodMs: options.syncPeriodMs,
    ...(env.clock ? { clock: env.clock } : {}),
    logger,
  });
  const { client, clock, metrics } = manager;
  const eventsApi = new ResourceClient<KubeObject>(client, EVENTS);

  const countDroppedEvent = eventsDroppedCounter(metrics.registry);
  // The recorder is built before the controllers it defers to.
  const controllers: BackupScheduleController[] = [];
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
    deferWhile: () => controllers.some((c) => c.busy()),
  });
  manager.addFlush(() => events.flush());
  let serverVersion: KubeVersion | undefined;
  const serverVersionChecked = checkServerVersion(client, logger).then((v) => (serverVersion = v));
  void checkServedVersion(client, logger);
  controllers.push(...addControllers(manager, options, { events, serverVersionChecked, serverVersion: () => serverVersion }));

  // Every replica serves conversions; the certificate Secret and the CRD's caBundle are written by the
  // leader, and by a follower only while the Secret holds nothing servable (CertificateManager says
  // why), so this client is not behind the leader's write gate: each of its writes is conditional. With
  // --conversion-webhook-cert-dir, cert-manager keeps both: every replica only reads the mounted files.
  let webhook: RunningConversionWebhook | undefined;
  if (options.conversionWebhookAddress) {
    const webhookClient = new KubeClient({ config, userAgent, onRequest: metrics.restClientObserver });
    manager.addCloser(() => webhookClient.close());
    // Loaded only when asked for: node-forge and the certificate code stay out of a controller without it.
    const [{ startConversionWebhook }, { certificateLoadedCheck }] = await Promise.all([import('./conversion-webhook-server.ts'), import('../runtime/certificate-manager.ts')]);
    const common = { address: options.conversionWebhookAddress, clock, logger };
    const gate = manager.gate;
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
    );
    const running = webhook;
    manager.addServer(running);
    // Not ready (out of the Service's endpoints) until it has a certificate to serve.
    manager.addReadyCheck(certificateLoadedCheck(running.certificates));
    manager.onStartedLeading(() => void running.certificates.sync());
  }
  const urls = await manager.start().catch((err: unknown) => {
    if (err instanceof ManagerServerError) {
      const flag = err.server === 'metrics' ? '--metrics-bind-address' : '--health-probe-bind-address';
      throw new OperatorStartError(`${flag}: ${err.message}`, { cause: err.cause });
    }
    throw err;
  });
  logger.info({ metrics: urls.metricsUrl, health: urls.healthUrl, conversionWebhook: webhook?.url, namespaces: options.namespaces.length > 0 ? options.namespaces : 'all', identity }, 'starting');

  return {
    healthUrl: urls.healthUrl,
    metricsUrl: urls.metricsUrl,
    conversionWebhookUrl: webhook?.url,
    failed: manager.failed,
    shutdown: () => manager.shutdown(options.shutdownTimeoutSeconds * 1000),
  };
}
