import { Construct } from 'constructs';
import { Chart } from 'cdk8s';
import type { INamespace } from 'kubernetes-models/v1/Namespace';
import { DEFAULT_IMAGE } from '../pure/image.ts';
import { OPERATOR_NAME } from '../pure/labels.ts';
import { ControllerDeployment, METRICS_PORT_NAME } from './controller-deployment.ts';
import { certManagerNames, INJECT_CA_FROM_ANNOTATION } from './cert-manager.ts';
import { ConversionWebhook, webhookCertificates, type WebhookCertificates } from './conversion-webhook.ts';
import { BackupScheduleCrd } from './crd.ts';
import { RestoreCrd } from './restore-crd.ts';
import { kubeObject } from './kube-object.ts';
import { LeaderLease } from './leader-lease.ts';
import { ControllerNetworkPolicy, type ControllerNetworkPolicyOptions } from './network-policy.ts';
import { OperatorRbac } from './operator-rbac.ts';
import { PrometheusMonitoring } from './prometheus-monitoring.ts';
import { StorageMigratorRole } from './storage-migrator-role.ts';
import { UserClusterRoles } from './user-cluster-roles.ts';
import { SyncWave, syncWave } from './sync-wave.ts';

/** Props of OperatorChart: what a user of the synth may choose. */
export interface OperatorChartProps {
  /**
   * Namespace of the controller, its ServiceAccount and its Lease (created by the chart).
   * @default 'backupschedule-system'
   */
  readonly namespace?: string;
  /**
   * Image of the controller.
   * @default DEFAULT_IMAGE
   */
  readonly image?: string;
  /**
   * Image of the backup Jobs when a spec names none (the controller's `--backup-image`). A new value
   * rewrites every child CronJob once.
   * @default DEFAULT_BACKUP_IMAGE
   */
  readonly backupImage?: string;
  /**
   * Images `spec.image` may name besides `backupImage` (the controller's `--allowed-backup-images`; `*`
   * matches any characters). Empty: backups run `backupImage` only.
   * @default []
   */
  readonly allowedBackupImages?: readonly string[];
  /**
   * Object store endpoints `spec.destination.objectStore.endpoint` may name (the controller's
   * `--allowed-backup-endpoints`: `https://host[:port]`, `*` for any characters but `/`, a lone `*` for all).
   * Empty: AWS S3 only (schedules without an endpoint).
   * @default []
   */
  readonly allowedBackupEndpoints?: readonly string[];
  /**
   * Controller replicas (leader election keeps one active).
   * @default 2
   */
  readonly replicas?: number;
  /**
   * Namespaces the controller watches; empty = all. When set, its RBAC is granted in those namespaces
   * only (src/manifests/operator-rbac.ts), which must exist before dist/ is applied.
   * @default []
   */
  readonly watchedNamespaces?: readonly string[];
  /**
   * Name of the leader-election Lease.
   * @default 'backupschedule-operator-leader'
   */
  readonly leaseName?: string;
  /**
   * Also synthesize the example `kubelings/nightly-etcd` BackupSchedule and its Namespace (an
   * `ExampleChart` written into dist/examples/ by `synthesize`; never part of this chart).
   * @default true
   */
  readonly includeExample?: boolean;
  /**
   * Who keeps the conversion webhook's certificate. `controller`: the controller keeps a CA and serving
   * certificate in the shipped (empty) Secret, injects the CA into the CRD and rotates both, with a Role
   * for that Secret and `get`/`patch` on the CRD. `cert-manager` (cert-manager ≥ 1.0 must be installed):
   * a self-signed Issuer, a CA Certificate, a CA Issuer and the serving Certificate, the CRD annotated
   * `cert-manager.io/inject-ca-from` for cainjector, the Secret mounted read-only into the Pods; no
   * Secret shipped, and the controller gets no rights on Secrets or on the CRD.
   * @default 'controller'
   */
  readonly certificates?: WebhookCertificates;
  /**
   * A NetworkPolicy isolating the controller Pods for ingress (ControllerNetworkPolicy): the conversion
   * webhook and metrics ports open from anywhere unless narrowed, the health port only to the Pod's node
   * (kubelet's probes, which no NetworkPolicy blocks), everything else closed; `true` takes the
   * defaults, `false` ships none. kube-apiserver's source address is not selectable in general, so the
   * webhook stays open to any source unless `webhookFrom` names the control plane's addresses. On by
   * default (issue 41): other Pods' connection floods on the health port would fail kubelet's probes and
   * have the controller restarted; the webhook and metrics ports are bounded by the servers' limits.
   * @default true
   */
  readonly networkPolicy?: boolean | ControllerNetworkPolicyOptions;
  /**
   * Scraping and alerting. `prometheus-operator` (its CRDs must be installed): a PodMonitor scraping
   * every replica's metrics port and a PrometheusRule with the alerts BackupScheduleFailing,
   * BackupScheduleMissedRuns and BackupOperatorDown (docs/runbooks.md). `none`: neither, so dist/
   * installs on any cluster.
   * @default 'none'
   */
  readonly monitoring?: 'none' | 'prometheus-operator';
}

/** Name of the conversion webhook's Service. */
export const WEBHOOK_SERVICE_NAME = `${OPERATOR_NAME}-webhook`;
/** Name of the conversion webhook's certificate Secret. */
export const WEBHOOK_SECRET_NAME = `${OPERATOR_NAME}-webhook-tls`;

/**
 * Everything the operator needs in a cluster: Namespace, CRD, RBAC (the controller's, and the viewer and
 * editor ClusterRoles aggregated into `view`/`edit`/`admin`), Lease, controller Deployment, and the
 * conversion webhook's Service and certificate Secret (or, with `certificates: 'cert-manager'`, the
 * cert-manager Issuers and Certificates that write it).
 * The example BackupSchedule is a separate chart (`ExampleChart`): it cannot be created by the
 * same `kubectl create -f` as its CRD. Names are explicit; nothing carries a cdk8s hash.
 */
export class OperatorChart extends Chart {
  /** The labels on every object of the chart. */
  public readonly commonLabels: Readonly<Record<string, string>>;

  public constructor(scope: Construct, id: string, props: OperatorChartProps = {}) {
    super(scope, id, { disableResourceNameHashes: true });
    const namespace = props.namespace ?? 'backupschedule-system';
    const leaseName = props.leaseName ?? `${OPERATOR_NAME}-leader`;
    const labels = { 'app.kubernetes.io/part-of': OPERATOR_NAME, 'app.kubernetes.io/managed-by': 'cdk8s' };
    this.commonLabels = labels;
    kubeObject<INamespace>(this, 'Namespace', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace, labels, annotations: syncWave(SyncWave.namespace) },
    });
    // Every replica serves the conversion webhook (v1 is stored, v1alpha1 converted), with the
    // certificate the controller keeps in the shipped Secret, or the one cert-manager writes into it.
    const certificates = webhookCertificates(props.certificates, 'OperatorChart: certificates');
    const webhook = { serviceName: WEBHOOK_SERVICE_NAME, secretName: WEBHOOK_SECRET_NAME, certificates };
    const byCertManager = certificates === 'cert-manager';
    new BackupScheduleCrd(this, 'Crd', {
      labels,
      webhookService: { namespace, name: webhook.serviceName },
      ...(byCertManager ? { annotations: { [INJECT_CA_FROM_ANNOTATION]: `${namespace}/${certManagerNames(OPERATOR_NAME).servingCertificate}` } } : {}),
    });
    new RestoreCrd(this, 'RestoreCrd', { labels });
    // Least privilege: with cert-manager the controller only reads the mounted files, no Secret nor CRD rights.
    const rbac = new OperatorRbac(this, 'Rbac', { name: OPERATOR_NAME, namespace, leaseName, labels, watchedNamespaces: props.watchedNamespaces ?? [], ...(byCertManager ? {} : { webhookSecretName: webhook.secretName }) });
    new UserClusterRoles(this, 'UserRoles', { namePrefix: 'backupschedule', labels });
    // Bound to nobody: the rights of `migrate-storage`, for whoever runs it after an upgrade (README "Upgrading").
    new StorageMigratorRole(this, 'StorageMigratorRole', { labels });
    new LeaderLease(this, 'LeaderLease', { name: leaseName, namespace, labels });
    const controller = new ControllerDeployment(this, 'Controller', {
      name: OPERATOR_NAME,
      namespace,
      serviceAccountName: rbac.serviceAccount.name,
      leaseName,
      leaseNamespace: namespace,
      image: props.image ?? DEFAULT_IMAGE,
      ...(props.backupImage !== undefined ? { backupImage: props.backupImage } : {}),
      allowedBackupImages: props.allowedBackupImages ?? [],
      allowedBackupEndpoints: props.allowedBackupEndpoints ?? [],
      replicas: props.replicas ?? 2,
      watchedNamespaces: props.watchedNamespaces ?? [],
      labels,
      conversionWebhook: webhook,
    });
    new ConversionWebhook(this, 'ConversionWebhook', { namespace, ...webhook, certManagerNamePrefix: OPERATOR_NAME, selector: controller.webhookSelector, labels });
    const monitoring = props.monitoring ?? 'none';
    if (monitoring !== 'none' && monitoring !== 'prometheus-operator') throw new Error(`OperatorChart: monitoring: expected "none" or "prometheus-operator", got ${JSON.stringify(props.monitoring)}`);
    if (monitoring === 'prometheus-operator') {
      new PrometheusMonitoring(this, 'Monitoring', { name: OPERATOR_NAME, namespace, podSelector: controller.selector, metricsPortName: METRICS_PORT_NAME, labels });
    }
    if (props.networkPolicy !== false) {
      const options = props.networkPolicy === undefined || props.networkPolicy === true ? {} : props.networkPolicy;
      if (typeof options !== 'object' || options === null) throw new Error(`OperatorChart: networkPolicy: expected true, false or the options of ControllerNetworkPolicy, got ${JSON.stringify(props.networkPolicy)}`);
      new ControllerNetworkPolicy(this, 'NetworkPolicy', { ...options, name: OPERATOR_NAME, namespace, podSelector: controller.selector, labels });
    }
  }
}
