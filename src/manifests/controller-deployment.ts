import { Construct } from 'constructs';
import type { ApiObject } from 'cdk8s';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import { DEFAULT_BACKUP_IMAGE, DEFAULT_IMAGE } from '../pure/image.ts';
import { WEBHOOK_CERTIFICATE_CHECK } from '../pure/names.ts';
import { imagePatternProblem } from '../pure/image-policy.ts';
import { endpointPatternProblem } from '../pure/endpoint-policy.ts';
import { WEBHOOK_PORT, type WebhookCertificates } from './conversion-webhook.ts';
import { kubeObject } from './kube-object.ts';
import { SyncWave, syncWave } from './sync-wave.ts';

/** Name of the container port serving /metrics (what a PodMonitor selects). */
export const METRICS_PORT_NAME = 'metrics';
/** Port of the Prometheus metrics endpoint (`--metrics-bind-address`). */
export const METRICS_PORT = 8080;
/** Port of /healthz and /readyz (`--health-probe-bind-address`). */
export const HEALTH_PORT = 8081;

/**
 * Where the controller's container mounts the cert-manager-written webhook Secret (read-only), passed as
 * `--conversion-webhook-cert-dir`.
 */
export const WEBHOOK_CERT_DIR = '/etc/conversion-webhook/tls';

/** Props of ControllerDeployment. */
export interface ControllerDeploymentProps {
  /** Name of the Deployment (and its selector's instance label). */
  readonly name: string;
  /** Namespace of the Deployment. */
  readonly namespace: string;
  /** ServiceAccount the Pods run as. */
  readonly serviceAccountName: string;
  /** Leader-election Lease name (`--lease-name`). */
  readonly leaseName: string;
  /** Leader-election Lease namespace (`--lease-namespace`). */
  readonly leaseNamespace: string;
  /**
   * Image of the controller.
   * @default DEFAULT_IMAGE
   */
  readonly image?: string;
  /**
   * Image of the backup Jobs when a spec names none (`--backup-image`): the runner's release, which moves
   * only when the runner changes (see {@link DEFAULT_BACKUP_IMAGE}).
   * @default DEFAULT_BACKUP_IMAGE
   */
  readonly backupImage?: string;
  /**
   * Images `spec.image` may name besides `backupImage` (`--allowed-backup-images`, passed only when non-empty).
   * @default [] (`backupImage` only)
   */
  readonly allowedBackupImages?: readonly string[];
  /**
   * Object store endpoints schedules may name (`--allowed-backup-endpoints`, passed only when non-empty).
   * @default [] (AWS S3 only: schedules without an endpoint)
   */
  readonly allowedBackupEndpoints?: readonly string[];
  /**
   * Replicas; one leads, the others wait on the Lease.
   * @default 2
   */
  readonly replicas?: number;
  /**
   * Namespaces to watch (`--namespace`, repeated); empty = all namespaces.
   * @default []
   */
  readonly watchedNamespaces?: readonly string[];
  /**
   * Parallel reconciles (`--concurrency`).
   * @default 2
   */
  readonly concurrency?: number;
  /**
   * `--log-level`.
   * @default 'info'
   */
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /**
   * Serve the conversion webhook on {@link WEBHOOK_PORT} (container port `webhook`), its certificate
   * issued for `serviceName` and kept in `secretName`: by the controller (`certificates: 'controller'`,
   * the default: `--conversion-webhook-secret-name`), or by cert-manager (`certificates: 'cert-manager'`:
   * the Secret is mounted read-only at {@link WEBHOOK_CERT_DIR}, `--conversion-webhook-cert-dir`).
   * Unset: the flag stays at its default, off.
   * @default undefined
   */
  readonly conversionWebhook?: { readonly serviceName: string; readonly secretName: string; readonly certificates?: WebhookCertificates };
  /**
   * Labels on the Deployment and its Pods; the selector uses only the stable name/instance pair.
   * @default {}
   */
  readonly labels?: Readonly<Record<string, string>>;
}

const WEBHOOK_TLS_VOLUME = 'conversion-webhook-tls';

/**
 * The readiness probe's path. With the conversion webhook, Pod readiness is what puts a replica in the
 * webhook Service's endpoints, so it must mean "can serve conversions" (a certificate is loaded) and
 * nothing that needs conversions itself: right after an upgrade every object is still stored in
 * v1alpha1, so the caches (which LIST v1) sync only through the webhook, which is reachable only
 * through ready Pods (controller-runtime#2321). `/readyz` as a whole (caches, Lease) stays for people
 * and monitoring.
 */
export function readinessPath(props: Pick<ControllerDeploymentProps, 'conversionWebhook'>): string {
  return props.conversionWebhook ? `/readyz/${WEBHOOK_CERTIFICATE_CHECK}` : '/readyz';
}

/** Pod label of the controller replicas that serve the conversion webhook (the webhook Service selects it). */
export const SERVES_CONVERSION_LABEL = 'kubelings.dev/serves-conversion';

/** The controller's command-line flags (issue 5), in a fixed order. */
export function controllerArgs(props: ControllerDeploymentProps): string[] {
  return [
    '--leader-elect',
    `--lease-name=${props.leaseName}`,
    `--lease-namespace=${props.leaseNamespace}`,
    `--metrics-bind-address=:${METRICS_PORT}`,
    `--health-probe-bind-address=:${HEALTH_PORT}`,
    `--concurrency=${props.concurrency ?? 2}`,
    `--log-level=${props.logLevel ?? 'info'}`,
    '--log-format=json',
    ...(props.watchedNamespaces ?? []).map((ns) => `--namespace=${ns}`),
    `--backup-image=${props.backupImage ?? DEFAULT_BACKUP_IMAGE}`,
    ...((props.allowedBackupImages ?? []).length > 0 ? [`--allowed-backup-images=${(props.allowedBackupImages ?? []).join(',')}`] : []),
    ...((props.allowedBackupEndpoints ?? []).length > 0 ? [`--allowed-backup-endpoints=${(props.allowedBackupEndpoints ?? []).join(',')}`] : []),
    ...(props.conversionWebhook ? [`--conversion-webhook-bind-address=:${WEBHOOK_PORT}`] : []),
    ...(props.conversionWebhook && props.conversionWebhook.certificates === 'cert-manager'
      ? // cert-manager writes the certificate for the Service's names: the controller only reads the files.
        [`--conversion-webhook-cert-dir=${WEBHOOK_CERT_DIR}`]
      : []),
    ...(props.conversionWebhook && props.conversionWebhook.certificates !== 'cert-manager'
      ? [`--conversion-webhook-service-name=${props.conversionWebhook.serviceName}`, `--conversion-webhook-secret-name=${props.conversionWebhook.secretName}`]
      : []),
  ];
}

/**
 * The controller Deployment: restricted Pod Security, its own token mounted (it talks to the API),
 * probes on /healthz and /readyz, a metrics port, modest resources, 2 replicas with leader election,
 * and an explicit selector (no cdk8s hashed labels). The image's entrypoint is the controller bundle,
 * so only `args` are set.
 */
export class ControllerDeployment extends Construct {
  /** The Deployment API object. */
  public readonly deployment: ApiObject;
  /** The Pods' labels its selector matches. */
  public readonly selector: Readonly<Record<string, string>>;
  /**
   * The labels of the Pods that serve the conversion webhook: the selector plus
   * {@link SERVES_CONVERSION_LABEL}, which a release without the webhook lacks, so that during a rolling
   * upgrade the webhook's Service never routes a conversion to an old replica that does not listen.
   */
  public readonly webhookSelector: Readonly<Record<string, string>>;

  public constructor(scope: Construct, id: string, props: ControllerDeploymentProps) {
    super(scope, id);
    for (const pattern of props.allowedBackupImages ?? []) {
      const problem = imagePatternProblem(pattern);
      if (problem) throw new Error(`ControllerDeployment: allowedBackupImages: ${problem}`);
      if (pattern.includes(',')) throw new Error(`ControllerDeployment: allowedBackupImages: ${JSON.stringify(pattern)} contains a comma, which separates patterns in --allowed-backup-images`);
    }
    for (const pattern of props.allowedBackupEndpoints ?? []) {
      const problem = endpointPatternProblem(pattern);
      if (problem) throw new Error(`ControllerDeployment: allowedBackupEndpoints: ${problem}`);
      if (pattern.includes(',')) throw new Error(`ControllerDeployment: allowedBackupEndpoints: ${JSON.stringify(pattern)} contains a comma, which separates patterns in --allowed-backup-endpoints`);
    }
    const selector = { 'app.kubernetes.io/name': 'backupschedule-operator', 'app.kubernetes.io/instance': props.name };
    this.selector = selector;
    const serving: Record<string, string> = props.conversionWebhook ? { [SERVES_CONVERSION_LABEL]: 'true' } : {};
    this.webhookSelector = { ...selector, ...serving };
    const labels = { ...(props.labels ?? {}), ...selector, 'app.kubernetes.io/component': 'controller' };
    // Pods only: the Deployment's selector is immutable and must match old Pods too.
    const podLabels = { ...labels, ...serving };
    const mountedSecret = props.conversionWebhook?.certificates === 'cert-manager' ? props.conversionWebhook.secretName : undefined;
    const probe = (path: string, periodSeconds: number): IProbe => ({
      httpGet: { path, port: 'health' },
      periodSeconds,
      timeoutSeconds: 2,
      failureThreshold: 3,
    });
    this.deployment = kubeObject<IDeployment>(this, 'Resource', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: props.name, namespace: props.namespace, labels, annotations: syncWave(SyncWave.controller) },
      spec: {
        replicas: props.replicas ?? 2,
        revisionHistoryLimit: 3,
        selector: { matchLabels: selector },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } },
        template: {
          metadata: { labels: podLabels },
          spec: {
            serviceAccountName: props.serviceAccountName,
            // The controller calls the API server with its ServiceAccount token (cdk8s-plus defaults to false).
            automountServiceAccountToken: true,
            // Lease 15 s: a successor takes over quickly; the old leader stops writing before that.
            terminationGracePeriodSeconds: 30,
            securityContext: {
              runAsNonRoot: true,
              runAsUser: 65532,
              runAsGroup: 65532,
              seccompProfile: { type: 'RuntimeDefault' },
            },
            containers: [
              {
                name: 'controller',
                image: props.image ?? DEFAULT_IMAGE,
                imagePullPolicy: 'IfNotPresent',
                args: controllerArgs(props),
                ports: [
                  { name: METRICS_PORT_NAME, containerPort: METRICS_PORT, protocol: 'TCP' },
                  { name: 'health', containerPort: HEALTH_PORT, protocol: 'TCP' },
                  ...(props.conversionWebhook ? [{ name: 'webhook', containerPort: WEBHOOK_PORT, protocol: 'TCP' as const }] : []),
                ],
                livenessProbe: { ...probe('/healthz', 20), initialDelaySeconds: 5 },
                readinessProbe: { ...probe(readinessPath(props), 10), initialDelaySeconds: 2 },
                // Measured (bench/convergence-bench.ts, the image's V8 flags from src/controller/node-flags.ts):
                // 10,000 BackupSchedules + 10,000 CronJobs cached take ~130 MiB settled and ~165 MiB at the
                // peak of converging them all at once; the limit leaves room for the 192 MiB heap cap.
                resources: {
                  requests: { cpu: '50m', memory: '160Mi' },
                  limits: { memory: '320Mi' },
                },
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  runAsNonRoot: true,
                  capabilities: { drop: ['ALL'] },
                },
                volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }, ...(mountedSecret ? [{ name: WEBHOOK_TLS_VOLUME, mountPath: WEBHOOK_CERT_DIR, readOnly: true }] : [])],
              },
            ],
            volumes: [
              { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
              // 0644 (the API default, written out as kubebuilder's scaffold does): the container runs as
              // 65532, not as the files' owner (root). kubelet updates the files in place when cert-manager renews.
              ...(mountedSecret ? [{ name: WEBHOOK_TLS_VOLUME, secret: { secretName: mountedSecret, defaultMode: 0o644 } }] : []),
            ],
          },
        },
      },
    });
  }
}
