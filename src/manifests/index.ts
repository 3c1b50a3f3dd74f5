/** cdk8s constructs of the operator and the synth entry point. */
export { BackupScheduleCrd, PRINTER_COLUMNS, type BackupScheduleCrdProps } from './crd.ts';
export { OperatorRbac, CLUSTER_RULES, CRD_CA_BUNDLE_RULE, leaseRules, webhookSecretRules, type OperatorRbacProps } from './operator-rbac.ts';
export { ConversionWebhook, WEBHOOK_PORT, WEBHOOK_CERTIFICATES, webhookCertificates, type ConversionWebhookProps, type WebhookCertificates } from './conversion-webhook.ts';
export {
  CertManagerWebhookCertificates,
  certManagerNames,
  CERT_MANAGER_API_VERSION,
  INJECT_CA_FROM_ANNOTATION,
  type CertManagerCertificate,
  type CertManagerIssuer,
  type CertManagerObjectMeta,
  type CertManagerWebhookCertificatesProps,
} from './cert-manager.ts';
export { StorageMigratorRole, type StorageMigratorRoleProps } from './storage-migrator-role.ts';
export { UserClusterRoles, VIEWER_RULES, EDITOR_RULES, AGGREGATE_TO_VIEW, AGGREGATE_TO_EDIT, AGGREGATE_TO_ADMIN, type UserClusterRolesProps } from './user-cluster-roles.ts';
export { LeaderLease, type LeaderLeaseProps } from './leader-lease.ts';
export { ControllerNetworkPolicy, type ControllerNetworkPolicyOptions, type ControllerNetworkPolicyProps } from './network-policy.ts';
export { ControllerDeployment, controllerArgs, HEALTH_PORT, METRICS_PORT, SERVES_CONVERSION_LABEL, WEBHOOK_CERT_DIR, type ControllerDeploymentProps } from './controller-deployment.ts';
export { ExampleSchedule, nightlyEtcd, type ExampleScheduleProps } from './example-schedule.ts';
export { OperatorChart, WEBHOOK_SECRET_NAME, WEBHOOK_SERVICE_NAME, type OperatorChartProps } from './operator-chart.ts';
export { ExampleChart } from './example-chart.ts';
export { synthesize, EXAMPLES_DIR, SCHEMAS_DIR, KIND_ORDER, KUSTOMIZATION_FILE, type SynthesizedDir } from './synthesize.ts';
export { SYNC_WAVE_ANNOTATION, SyncWave, syncWave } from './sync-wave.ts';
export { kubeObject } from './kube-object.ts';
