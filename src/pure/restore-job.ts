/**
 * The Job that runs one Restore: `backup restore` in the runner image, the backups' claim mounted
 * read-only (or the bucket's flags and secretKeyRef credentials), the target claim read-write, the age
 * identity Secret read-only, under the same restricted Pod as a backup (src/pure/backup-pod.ts). Pure
 * and deterministic, like buildCronJob: the same Restore always gives the same Job, key order included.
 */
import { createHash } from 'node:crypto';
import type { IJob } from 'kubernetes-models/batch/v1/Job';
import type { IVolume } from 'kubernetes-models/v1/Volume';
import type { IVolumeMount } from 'kubernetes-models/v1/VolumeMount';
import type { Restore, RestoreSource } from '../../imports/restore.ts';
import { GROUP_VERSION_V1 } from '../api/constants.ts';
import { RESTORE_KIND } from '../api/restore-schema.ts';
import { validateRestore } from '../api/validate.ts';
import type { OwnerReference } from '../kube/object.ts';
import { TMP_MOUNT_PATH } from './backup-contract.ts';
import { credentialEnv, objectStoreFlags, objectStoreUrl, runnerPodSpec, s3CaVolume } from './backup-pod.ts';
import { DEFAULT_BACKUP_IMAGE } from './image.ts';
import { LABEL_COMPONENT, LABEL_INSTANCE, LABEL_MANAGED_BY, LABEL_NAME, LABEL_PART_OF, OPERATOR_NAME } from './labels.ts';
import { HASH_LENGTH, labelValueFor, MAX_LABEL_VALUE_LENGTH } from './names.ts';
import { AGE_IDENTITY_KEY, AGE_IDENTITY_MOUNT_PATH, RESTORE_CONTAINER_NAME, RESTORE_FLAGS, RESTORE_FROM_MOUNT_PATH, RESTORE_SUBCOMMAND, RESTORE_TARGET_MOUNT_PATH } from './restore-contract.ts';

/** A batch/v1 Job as plain JSON data, exactly as sent to the API server. */
export type Job = IJob;

/** Where the backups are: a claim or a bucket, as a BackupSchedule v1 destination names them. */
export type ResolvedSource = Pick<RestoreSource, 'persistentVolumeClaim' | 'objectStore'>;

/** Names the owning Restore on its Job and Pod (shortened with a hash when > 63 characters). */
export const LABEL_RESTORE = 'kubelings.dev/restore';

/** Options of {@link buildRestoreJob}. */
export interface RestoreJobOptions {
  /** Image when the spec sets none (the controller's `--backup-image`). @default DEFAULT_BACKUP_IMAGE */
  readonly image?: string;
}

/**
 * The Job's name: `restore-<name>`, a DNS-1123 label of at most 63 characters (its Pods' `job-name`
 * label holds it). Dots become dashes; a name that changed or was shortened gets a hash of the original,
 * so `a.b` and `a-b` never share a Job.
 */
export function restoreJobName(restoreName: string): string {
  const plain = `restore-${restoreName}`;
  if (plain.length <= MAX_LABEL_VALUE_LENGTH && !restoreName.includes('.')) return plain;
  const hash = createHash('sha256').update(restoreName).digest('hex').slice(0, HASH_LENGTH);
  return `${plain.replace(/\./g, '-').slice(0, MAX_LABEL_VALUE_LENGTH - HASH_LENGTH - 1).replace(/-+$/, '')}-${hash}`;
}

/** The labels of a restore Job and its Pod, in a fixed order. */
export function restoreLabels(restoreName: string): Record<string, string> {
  const owner = labelValueFor(restoreName);
  return { [LABEL_NAME]: 'backup', [LABEL_INSTANCE]: owner, [LABEL_COMPONENT]: 'restore-job', [LABEL_MANAGED_BY]: OPERATOR_NAME, [LABEL_PART_OF]: OPERATOR_NAME, [LABEL_RESTORE]: owner };
}

function required(restore: Restore, field: 'name' | 'namespace' | 'uid'): string {
  const value = restore.metadata?.[field];
  if (typeof value !== 'string' || value === '') throw new Error(`Restore metadata.${field} is required to build its Job (got ${JSON.stringify(value)})`);
  return value;
}

/** The controller ownerReference: the Job goes with its Restore. */
export function restoreOwnerReference(restore: Restore): OwnerReference {
  return { apiVersion: GROUP_VERSION_V1, kind: RESTORE_KIND, name: required(restore, 'name'), uid: required(restore, 'uid'), controller: true, blockOwnerDeletion: true };
}

const under = (mount: string, path: string | undefined): string => (path === undefined ? mount : `${mount}/${path}`);

/** The source the Job reads: spec.from's own member, or what the controller resolved from the BackupSchedule. */
function sourceOf(restore: Restore, resolved: ResolvedSource | undefined): ResolvedSource {
  const { from } = restore.spec;
  const source = from.backupScheduleName === undefined ? from : resolved;
  if (from.backupScheduleName !== undefined && resolved === undefined) throw new Error(`Restore ${required(restore, 'name')}: spec.from.backupScheduleName ${from.backupScheduleName} needs its destination resolved (the BackupSchedule's spec.destination)`);
  if (from.backupScheduleName === undefined && resolved !== undefined) throw new Error(`Restore ${required(restore, 'name')}: a resolved source is only for spec.from.backupScheduleName; spec.from names its own`);
  if (source === undefined || (source.persistentVolumeClaim === undefined) === (source.objectStore === undefined)) throw new Error(`Restore ${required(restore, 'name')}: the source must be exactly one of persistentVolumeClaim, objectStore`);
  return source;
}

/**
 * The desired Job of a Restore. `resolved` is the destination of the BackupSchedule that
 * spec.from.backupScheduleName names (the controller reads it); leave it out when spec.from names a
 * claim or a bucket itself.
 *
 * @throws Error naming the field when the Restore is invalid (validateRestore), lacks
 *   metadata.name/namespace/uid, or the source is missing or ambiguous.
 */
export function buildRestoreJob(restore: Restore, resolved?: ResolvedSource, options: RestoreJobOptions = {}): Job {
  const problems = validateRestore(restore);
  if (problems.length > 0) throw new Error(`invalid Restore ${restore.metadata?.namespace ?? ''}/${restore.metadata?.name ?? ''}: ${problems.map((p) => p.message).join('; ')}`);
  const { spec } = restore;
  const name = required(restore, 'name');
  const source = sourceOf(restore, resolved);
  const target = spec.target.persistentVolumeClaim;
  const volumes: IVolume[] = [{ name: 'target', persistentVolumeClaim: { claimName: target.claimName } }];
  const mounts: IVolumeMount[] = [{ name: 'target', mountPath: RESTORE_TARGET_MOUNT_PATH }];
  let from: string;
  if (source.persistentVolumeClaim !== undefined) {
    const claim = source.persistentVolumeClaim;
    // The backups on the target claim itself: one volume (a claim mounted twice could not be both read-only and not).
    if (claim.claimName === target.claimName) from = under(RESTORE_TARGET_MOUNT_PATH, claim.path);
    else {
      volumes.push({ name: 'from', persistentVolumeClaim: { claimName: claim.claimName, readOnly: true } });
      mounts.push({ name: 'from', mountPath: RESTORE_FROM_MOUNT_PATH, readOnly: true });
      from = under(RESTORE_FROM_MOUNT_PATH, claim.path);
    }
  } else {
    from = objectStoreUrl(source.objectStore!);
    const ca = s3CaVolume(source.objectStore);
    if (ca !== undefined) {
      volumes.push(ca.volume);
      mounts.push(ca.mount);
    }
  }
  const identity = spec.decryption?.identitySecretName;
  if (identity !== undefined) {
    volumes.push({ name: 'age-identity', secret: { secretName: identity, defaultMode: 0o440, items: [{ key: AGE_IDENTITY_KEY, path: AGE_IDENTITY_KEY }] } });
    mounts.push({ name: 'age-identity', mountPath: AGE_IDENTITY_MOUNT_PATH, readOnly: true });
  }
  volumes.push({ name: 'tmp', emptyDir: {} });
  mounts.push({ name: 'tmp', mountPath: TMP_MOUNT_PATH });
  const flags = RESTORE_FLAGS;
  const args = [
    ...RESTORE_SUBCOMMAND,
    `${flags.from}=${from}`,
    ...(source.objectStore === undefined ? [] : objectStoreFlags(source.objectStore)),
    `${flags.backup}=${spec.backup}`,
    `${flags.targetDir}=${under(RESTORE_TARGET_MOUNT_PATH, target.path)}`,
    ...(spec.from.backupScheduleName === undefined ? [] : [`${flags.schedule}=${spec.from.backupScheduleName}`]),
    ...(identity === undefined ? [] : [`${flags.identity}=${AGE_IDENTITY_MOUNT_PATH}/${AGE_IDENTITY_KEY}`]),
    ...(spec.target.overwrite === true ? [flags.overwrite] : []),
    ...(spec.allowIncomplete === true ? [flags.allowIncomplete] : []),
  ];
  const labels = restoreLabels(name);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: restoreJobName(name), namespace: required(restore, 'namespace'), labels: { ...labels }, ownerReferences: [restoreOwnerReference(restore)] },
    spec: {
      // A retry after a partial write would only meet a non-empty target: a failed restore needs a person.
      backoffLimit: 0,
      ...(spec.activeDeadlineSeconds === undefined ? {} : { activeDeadlineSeconds: spec.activeDeadlineSeconds }),
      template: {
        metadata: { labels: { ...labels } },
        spec: runnerPodSpec({
          containerName: RESTORE_CONTAINER_NAME,
          image: spec.image ?? options.image ?? DEFAULT_BACKUP_IMAGE,
          args,
          env: [{ name: 'TMPDIR', value: TMP_MOUNT_PATH }, ...credentialEnv(source.objectStore)],
          resources: spec.resources,
          podSecurity: spec.podSecurityContext,
          mounts,
          volumes,
        }),
      },
    },
  };
}
