/**
 * The child CronJob's type as the package publishes it: the `batch/v1` fields the controller's
 * buildCronJob sets and the API server's defaults that `withServerDefaults` adds, with Kubernetes'
 * names and JSON shapes. Declared here, not imported from `kubernetes-models` (the operator's own,
 * complete types): that package is an optional peer dependency, and a `.d.ts` that imports it fails
 * `tsc` in every app that has not installed it (`Cannot find module 'kubernetes-models/…'`). The
 * wrappers in preview.ts assign the operator's values to these types, so the compiler proves every
 * field here matches Kubernetes' type; test/package checks the converse, that every field the
 * controller writes is declared here.
 */

/** `metav1.OwnerReference`. */
export interface CronJobOwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** `metav1.ObjectMeta`, the fields set on the CronJob and its templates. */
export interface CronJobObjectMeta {
  name?: string;
  namespace?: string;
  labels?: { [key: string]: string };
  annotations?: { [key: string]: string };
  ownerReferences?: CronJobOwnerReference[];
}

/** `batch/v1` `CronJob`: the backup schedule as the CronJob controller runs it. */
export interface CronJob {
  apiVersion: 'batch/v1';
  kind: 'CronJob';
  metadata?: CronJobObjectMeta;
  spec?: CronJobSpec;
}

/** `CronJobSpec`. */
export interface CronJobSpec {
  /** The BackupSchedule's cron schedule. */
  schedule: string;
  timeZone?: string;
  suspend?: boolean;
  /** `Allow`, `Forbid` or `Replace`. */
  concurrencyPolicy?: string;
  startingDeadlineSeconds?: number;
  successfulJobsHistoryLimit?: number;
  failedJobsHistoryLimit?: number;
  jobTemplate: JobTemplateSpec;
}

/** `JobTemplateSpec`. */
export interface JobTemplateSpec {
  metadata?: CronJobObjectMeta;
  spec?: JobSpec;
}

/** `JobSpec`. */
export interface JobSpec {
  backoffLimit?: number;
  activeDeadlineSeconds?: number;
  /** Exit codes 3 and 4 of the backup container fail the Job at once (retrying cannot help). */
  podFailurePolicy?: PodFailurePolicy;
  template: PodTemplateSpec;
}

/** `PodFailurePolicy`. */
export interface PodFailurePolicy {
  rules: PodFailurePolicyRule[];
}

/** `PodFailurePolicyRule`. */
export interface PodFailurePolicyRule {
  /** `FailJob`, `FailIndex`, `Ignore` or `Count`. */
  action: string;
  onExitCodes?: { containerName?: string; operator: string; values: number[] };
  onPodConditions?: { type: string; status?: string }[];
}

/** `PodTemplateSpec`. */
export interface PodTemplateSpec {
  metadata?: CronJobObjectMeta;
  spec?: PodSpec;
}

/** `PodSpec`, the fields of the backup Pod. */
export interface PodSpec {
  restartPolicy?: string;
  automountServiceAccountToken?: boolean;
  securityContext?: PodSecurityContext;
  containers: Container[];
  volumes?: Volume[];
  terminationGracePeriodSeconds?: number;
  dnsPolicy?: string;
  schedulerName?: string;
}

/** `PodSecurityContext`. */
export interface PodSecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  fsGroup?: number;
  fsGroupChangePolicy?: string;
  supplementalGroups?: number[];
  seccompProfile?: { type: string; localhostProfile?: string };
}

/** `Container`: the backup container. */
export interface Container {
  name: string;
  image?: string;
  imagePullPolicy?: string;
  /** The runner's `backup` subcommand and its flags (`--keep-daily=7`, …). */
  args?: string[];
  env?: { name: string; value?: string }[];
  resources?: ResourceRequirements;
  securityContext?: SecurityContext;
  volumeMounts?: VolumeMount[];
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
}

/** `ResourceRequirements`: quantities by resource name (`cpu`, `memory`, …). */
export interface ResourceRequirements {
  requests?: { [resource: string]: string | number };
  limits?: { [resource: string]: string | number };
}

/** `SecurityContext` of a container. */
export interface SecurityContext {
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  runAsNonRoot?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
}

/** `VolumeMount`. */
export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
}

/** `Volume`, with the sources the backup Pod uses. */
export interface Volume {
  name: string;
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  secret?: { secretName?: string; defaultMode?: number };
  emptyDir?: { medium?: string; sizeLimit?: string | number };
}
