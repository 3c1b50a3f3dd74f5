import type { ICronJob } from 'kubernetes-models/batch/v1/CronJob';
import type { IPodSecurityContext } from 'kubernetes-models/v1/PodSecurityContext';
import type { IEnvVar } from 'kubernetes-models/v1/EnvVar';
import type { IVolume } from 'kubernetes-models/v1/Volume';
import type { IVolumeMount } from 'kubernetes-models/v1/VolumeMount';
import type { AnyBackupSchedule, ResourceList, v1 } from '../api/index.ts';
import { GROUP_VERSION, isV1, RETENTION_RULES, SPEC_DEFAULTS, validateAnyVersion } from '../api/index.ts';
import { toV1 } from '../conversion/backupschedule-conversion.ts';
import {
  BACKUP_CONTAINER_NAME,
  BACKUP_SUBCOMMAND,
  BACKUP_USER_ID,
  CREDENTIAL_ENV_VARS,
  DESTINATION_MOUNT_PATH,
  ENV_SCHEDULE_NAME,
  ENV_SCHEDULE_NAMESPACE,
  ETCD_SCRATCH_SIZE_LIMIT,
  ETCD_TLS_MOUNT_PATH,
  FINAL_EXIT_CODES,
  OBJECT_STORE_FLAGS,
  OPTIONAL_CREDENTIAL_ENV_VARS,
  S3_CA_KEY,
  S3_CA_MOUNT_PATH,
  SOURCE_MOUNT_PATH,
  TMP_MOUNT_PATH,
} from './backup-contract.ts';
import { DEFAULT_BACKUP_IMAGE } from './image.ts';
import { childLabels } from './labels.ts';
import { childName, childNamespace, ownerName, ownerReference } from './owner-reference.ts';

/** A batch/v1 CronJob as plain JSON data, exactly as sent to the API server. */
export type CronJob = ICronJob;

/** Options of buildCronJob. */
export interface BuildOptions {
  /**
   * Image of the backup container when the spec sets none (the controller passes its `--backup-image`).
   * @default DEFAULT_BACKUP_IMAGE
   */
  readonly image?: string;
  /**
   * Whether the Job template carries the podFailurePolicy that makes exit codes 3 and 4 final (retrying
   * cannot help). The controller turns it off on clusters older than 1.26, whose API server drops it.
   * @default true
   */
  readonly podFailurePolicy?: boolean;
}


/** Resources of the backup container when the spec sets none. */
export const DEFAULT_BACKUP_RESOURCES: { readonly requests: ResourceList; readonly limits: ResourceList } = {
  requests: { cpu: '100m', memory: '128Mi' },
  limits: { memory: '512Mi' },
};

/** A copy of a ResourceList pair (maps of scalar quantities), in key order; structuredClone costs ~10 µs here. */
function copyResources(resources: { readonly requests?: ResourceList; readonly limits?: ResourceList }): { requests?: Record<string, string>; limits?: Record<string, string> } {
  const copy: Record<string, Record<string, string>> = {};
  for (const [key, list] of Object.entries(resources)) copy[key] = { ...(list as Record<string, string>) };
  return copy;
}

type Spec = v1.BackupScheduleSpec;

/** `keepDaily` → `--keep-daily`: the runner's flag of a retention rule. */
const retentionFlag = (rule: string): string => `--${rule.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** The runner's `--keep-*` flags, in restic's order; a schedule without retention keeps the last 7. */
function retentionArgs(retention: Spec['retention']): string[] {
  const rules = RETENTION_RULES.filter((rule) => retention?.[rule] !== undefined);
  if (rules.length === 0) return [`--keep-last=${SPEC_DEFAULTS.keepLast}`];
  return rules.map((rule) => `${retentionFlag(rule)}=${retention?.[rule]}`);
}

/** The destination flags: the claim's directory, or the bucket and how to reach it (never a credential). */
function destinationArgs(destination: Spec['destination']): string[] {
  const store = destination.objectStore;
  if (store === undefined) {
    const path = destination.persistentVolumeClaim?.path;
    return [`--destination-dir=${path === undefined ? DESTINATION_MOUNT_PATH : `${DESTINATION_MOUNT_PATH}/${path}`}`];
  }
  const flags = OBJECT_STORE_FLAGS;
  return [
    `${flags.destinationUrl}=s3://${store.bucket}${store.prefix === undefined ? '' : `/${store.prefix}`}`,
    ...(store.endpoint === undefined ? [] : [`${flags.endpoint}=${store.endpoint}`]),
    ...(store.region === undefined ? [] : [`${flags.region}=${store.region}`]),
    ...(store.forcePathStyle === true ? [flags.forcePathStyle] : []),
    ...(store.caSecretName === undefined ? [] : [`${flags.caFile}=${S3_CA_MOUNT_PATH}/${S3_CA_KEY}`]),
    ...(store.allowHttp === true ? [flags.allowHttp] : []),
  ];
}

function backupArgs(spec: Spec): string[] {
  const args = [BACKUP_SUBCOMMAND];
  if (spec.source.etcd !== undefined) {
    args.push('--source=etcd', `--etcd-endpoints=${spec.source.etcd.endpoints.join(',')}`);
    if (spec.source.etcd.tlsSecretName !== undefined) args.push(`--etcd-tls-dir=${ETCD_TLS_MOUNT_PATH}`);
  } else {
    args.push('--source=pvc', `--source-dir=${SOURCE_MOUNT_PATH}`);
  }
  args.push(
    ...destinationArgs(spec.destination),
    ...(spec.encryption?.ageRecipients ?? []).map((recipient) => `${OBJECT_STORE_FLAGS.ageRecipient}=${recipient}`),
    ...retentionArgs(spec.retention),
  );
  return args;
}

/**
 * The object store credentials as secretKeyRef env vars, each from the same key of the Secret: the
 * kubelet resolves them in the Pod, so they never appear in the CronJob, its arguments, the controller's
 * memory or its logs, and the controller needs no access to Secrets.
 */
function credentialEnv(spec: Spec): IEnvVar[] {
  const secretName = spec.destination.objectStore?.credentialsSecretName;
  if (secretName === undefined) return [];
  return CREDENTIAL_ENV_VARS.map((name) => ({
    name,
    valueFrom: { secretKeyRef: { name: secretName, key: name, ...(OPTIONAL_CREDENTIAL_ENV_VARS.includes(name) ? { optional: true } : {}) } },
  }));
}

/**
 * The scratch emptyDir at /tmp. An etcd snapshot bound for an object store is staged there whole, so it
 * gets a sizeLimit: the container's ephemeral-storage limit when the spec sets one, else etcd's largest
 * supported backend. Every other shape stages nothing big and keeps the plain emptyDir it always had.
 */
function scratchVolume(spec: Spec): IVolume {
  if (spec.destination.objectStore === undefined || spec.source.etcd === undefined) return { name: 'tmp', emptyDir: {} };
  return { name: 'tmp', emptyDir: { sizeLimit: spec.resources?.limits?.['ephemeral-storage'] ?? ETCD_SCRATCH_SIZE_LIMIT } };
}

function volumesAndMounts(spec: Spec): { volumes: IVolume[]; mounts: IVolumeMount[] } {
  const volumes: IVolume[] = [];
  const mounts: IVolumeMount[] = [];
  const claim = spec.destination.persistentVolumeClaim;
  if (claim !== undefined) {
    volumes.push({ name: 'destination', persistentVolumeClaim: { claimName: claim.claimName } });
    mounts.push({ name: 'destination', mountPath: DESTINATION_MOUNT_PATH });
  }
  const { etcd, persistentVolumeClaim } = spec.source;
  if (persistentVolumeClaim !== undefined) {
    volumes.push({ name: 'source', persistentVolumeClaim: { claimName: persistentVolumeClaim.claimName, readOnly: true } });
    mounts.push({ name: 'source', mountPath: SOURCE_MOUNT_PATH, readOnly: true });
  }
  if (etcd?.tlsSecretName !== undefined) {
    // 0440 + fsGroup: readable by the non-root backup user only.
    volumes.push({ name: 'etcd-tls', secret: { secretName: etcd.tlsSecretName, defaultMode: 0o440 } });
    mounts.push({ name: 'etcd-tls', mountPath: ETCD_TLS_MOUNT_PATH, readOnly: true });
  }
  const caSecretName = spec.destination.objectStore?.caSecretName;
  if (caSecretName !== undefined) {
    // Only ca.crt: a CA Secret made by cert-manager also holds a private key the runner has no use for.
    volumes.push({ name: 's3-ca', secret: { secretName: caSecretName, defaultMode: 0o440, items: [{ key: S3_CA_KEY, path: S3_CA_KEY }] } });
    mounts.push({ name: 's3-ca', mountPath: S3_CA_MOUNT_PATH, readOnly: true });
  }
  volumes.push(scratchVolume(spec));
  mounts.push({ name: 'tmp', mountPath: TMP_MOUNT_PATH });
  return { volumes, mounts };
}

/**
 * The Pod's security context: the image's non-root user unless spec.podSecurityContext names the data's
 * owner; the restricted Pod Security Standard's fields are fixed (the schema refuses uid 0).
 */
function podSecurityContext(spec: Spec): IPodSecurityContext {
  const custom = spec.podSecurityContext;
  return {
    runAsNonRoot: true,
    runAsUser: custom?.runAsUser ?? BACKUP_USER_ID,
    runAsGroup: custom?.runAsGroup ?? BACKUP_USER_ID,
    fsGroup: custom?.fsGroup ?? BACKUP_USER_ID,
    ...(custom?.fsGroupChangePolicy === undefined ? {} : { fsGroupChangePolicy: custom.fsGroupChangePolicy }),
    ...(custom?.supplementalGroups === undefined ? {} : { supplementalGroups: [...custom.supplementalGroups] }),
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/**
 * The desired child CronJob of a BackupSchedule in either served version. Pure and deterministic: the
 * same input always gives the same object with the same key order (so its YAML/JSON is byte-identical).
 * A v1alpha1 schedule is built through its lossless v1 form (src/conversion), so both versions of one
 * object give the same CronJob, the ownerReference's apiVersion aside (the input's own). Only fields the
 * operator owns are set; the API server's defaults (dnsPolicy, terminationMessagePath, …) are left out,
 * so a drift check must compare these fields only.
 *
 * @throws Error naming the field when the BackupSchedule is invalid (validateAnyVersion) or lacks
 *   metadata.name/namespace/uid.
 */
export function buildCronJob(schedule: AnyBackupSchedule, options: BuildOptions = {}): CronJob {
  const problems = validateAnyVersion(schedule);
  if (problems.length > 0) {
    throw new Error(`invalid BackupSchedule ${schedule.metadata?.namespace ?? ''}/${schedule.metadata?.name ?? ''}: ${problems.map((p) => p.message).join('; ')}`);
  }
  const { spec } = isV1(schedule) ? schedule : toV1({ ...schedule, apiVersion: GROUP_VERSION });
  const name = childName(schedule);
  const namespace = childNamespace(schedule);
  const labels = childLabels(ownerName(schedule));
  const { volumes, mounts } = volumesAndMounts(spec);
  const resources = spec.resources ?? DEFAULT_BACKUP_RESOURCES;

  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace, labels: { ...labels }, ownerReferences: [ownerReference(schedule)] },
    spec: {
      schedule: spec.schedule,
      ...(spec.timeZone === undefined ? {} : { timeZone: spec.timeZone }),
      suspend: spec.suspend ?? SPEC_DEFAULTS.suspend,
      concurrencyPolicy: spec.concurrencyPolicy ?? SPEC_DEFAULTS.concurrencyPolicy,
      ...(spec.startingDeadlineSeconds === undefined ? {} : { startingDeadlineSeconds: spec.startingDeadlineSeconds }),
      successfulJobsHistoryLimit: spec.successfulJobsHistoryLimit ?? SPEC_DEFAULTS.successfulJobsHistoryLimit,
      failedJobsHistoryLimit: spec.failedJobsHistoryLimit ?? SPEC_DEFAULTS.failedJobsHistoryLimit,
      jobTemplate: {
        metadata: { labels: { ...labels } },
        spec: {
          backoffLimit: spec.backoffLimit ?? SPEC_DEFAULTS.backoffLimit,
          ...(spec.activeDeadlineSeconds === undefined ? {} : { activeDeadlineSeconds: spec.activeDeadlineSeconds }),
          // Needs restartPolicy Never (below); other failures count against backoffLimit as before.
          ...(options.podFailurePolicy === false
            ? {}
            : { podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { containerName: BACKUP_CONTAINER_NAME, operator: 'In', values: [...FINAL_EXIT_CODES] } }] } }),
          template: {
            metadata: { labels: { ...labels } },
            spec: {
              // Never: each retry is a fresh Pod whose logs survive; backoffLimit counts them.
              restartPolicy: 'Never',
              // The runner needs no Kubernetes API access.
              automountServiceAccountToken: false,
              securityContext: podSecurityContext(spec),
              containers: [
                {
                  name: BACKUP_CONTAINER_NAME,
                  image: spec.image ?? options.image ?? DEFAULT_BACKUP_IMAGE,
                  args: backupArgs(spec),
                  env: [
                    { name: ENV_SCHEDULE_NAMESPACE, value: namespace },
                    { name: ENV_SCHEDULE_NAME, value: ownerName(schedule) },
                    { name: 'TMPDIR', value: TMP_MOUNT_PATH },
                    ...credentialEnv(spec),
                  ],
                  resources: copyResources(resources),
                  securityContext: {
                    allowPrivilegeEscalation: false,
                    readOnlyRootFilesystem: true,
                    runAsNonRoot: true,
                    capabilities: { drop: ['ALL'] },
                  },
                  volumeMounts: mounts,
                },
              ],
              volumes,
            },
          },
        },
      },
    },
  };
}
