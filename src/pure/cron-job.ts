import type { ICronJob } from 'kubernetes-models/batch/v1/CronJob';
import type { IVolume } from 'kubernetes-models/v1/Volume';
import type { IVolumeMount } from 'kubernetes-models/v1/VolumeMount';
import type { AnyBackupSchedule, v1 } from '../api/index.ts';
import { GROUP_VERSION, isV1, RETENTION_RULES, SPEC_DEFAULTS, validateAnyVersion } from '../api/index.ts';
import { toV1 } from '../conversion/backupschedule-conversion.ts';
import {
  BACKUP_CONTAINER_NAME,
  BACKUP_SUBCOMMAND,
  DESTINATION_MOUNT_PATH,
  ENV_SCHEDULE_NAME,
  ENV_SCHEDULE_NAMESPACE,
  ETCD_SCRATCH_SIZE_LIMIT,
  ETCD_TLS_MOUNT_PATH,
  FINAL_EXIT_CODES,
  OBJECT_STORE_FLAGS,
  SOURCE_MOUNT_PATH,
  TMP_MOUNT_PATH,
} from './backup-contract.ts';
import { credentialEnv, DEFAULT_BACKUP_RESOURCES, objectStoreFlags, objectStoreUrl, runnerPodSpec, s3CaVolume } from './backup-pod.ts';
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

export { DEFAULT_BACKUP_RESOURCES } from './backup-pod.ts';

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
  return [`${OBJECT_STORE_FLAGS.destinationUrl}=${objectStoreUrl(store)}`, ...objectStoreFlags(store)];
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
 * The scratch emptyDir at /tmp. An etcd snapshot is staged there whole on its way through the encode
 * pipeline (bbolt's check needs random access to it): to an object store, and to a claim when it is
 * encrypted (the claim only ever holds the ciphertext). So it then gets a sizeLimit: the container's
 * ephemeral-storage limit when the spec sets one, else etcd's largest supported backend. Every other
 * shape stages nothing big and keeps the plain emptyDir it always had (0.2.0's children stay as they were).
 */
function scratchVolume(spec: Spec): IVolume {
  const throughPipeline = spec.destination.objectStore !== undefined || (spec.encryption?.ageRecipients ?? []).length > 0;
  if (spec.source.etcd === undefined || !throughPipeline) return { name: 'tmp', emptyDir: {} };
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
  const ca = s3CaVolume(spec.destination.objectStore);
  if (ca !== undefined) {
    volumes.push(ca.volume);
    mounts.push(ca.mount);
  }
  volumes.push(scratchVolume(spec));
  mounts.push({ name: 'tmp', mountPath: TMP_MOUNT_PATH });
  return { volumes, mounts };
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
            spec: runnerPodSpec({
              containerName: BACKUP_CONTAINER_NAME,
              image: spec.image ?? options.image ?? DEFAULT_BACKUP_IMAGE,
              args: backupArgs(spec),
              env: [
                { name: ENV_SCHEDULE_NAMESPACE, value: namespace },
                { name: ENV_SCHEDULE_NAME, value: ownerName(schedule) },
                { name: 'TMPDIR', value: TMP_MOUNT_PATH },
                ...credentialEnv(spec.destination.objectStore),
              ],
              resources,
              podSecurity: spec.podSecurityContext,
              mounts,
              volumes,
            }),
          },
        },
      },
    },
  };
}
