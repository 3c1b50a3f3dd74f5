/**
 * The parts of a runner Pod that a backup (buildCronJob) and a restore (buildRestoreJob) share: the
 * restricted security contexts, the container's default resources, the object store's flags,
 * credentials (secretKeyRef env vars) and private CA volume. One definition each, so a backup and the
 * restore of it reach a bucket the same way and run under the same Pod Security.
 */
import type { IEnvVar } from 'kubernetes-models/v1/EnvVar';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IPodSecurityContext } from 'kubernetes-models/v1/PodSecurityContext';
import type { ISecurityContext } from 'kubernetes-models/v1/SecurityContext';
import type { IVolume } from 'kubernetes-models/v1/Volume';
import type { IVolumeMount } from 'kubernetes-models/v1/VolumeMount';
import type { ResourceList, v1 } from '../api/index.ts';
import { BACKUP_USER_ID, CREDENTIAL_ENV_VARS, OBJECT_STORE_FLAGS, OPTIONAL_CREDENTIAL_ENV_VARS, S3_CA_KEY, S3_CA_MOUNT_PATH } from './backup-contract.ts';

/** An object store as a BackupSchedule v1 destination (and a Restore's source) names it. */
export type ObjectStore = v1.ObjectStoreDestination;
/** The Pod security fields a spec may set. */
export type PodSecurity = v1.BackupPodSecurityContext;

/** Resources of the runner container when the spec sets none. */
export const DEFAULT_BACKUP_RESOURCES: { readonly requests: ResourceList; readonly limits: ResourceList } = {
  requests: { cpu: '100m', memory: '128Mi' },
  limits: { memory: '512Mi' },
};

/** A copy of a ResourceList pair (maps of scalar quantities), in key order; structuredClone costs ~10 µs here. */
export function copyResources(resources: { readonly requests?: ResourceList; readonly limits?: ResourceList } = DEFAULT_BACKUP_RESOURCES): { requests?: Record<string, string>; limits?: Record<string, string> } {
  const copy: Record<string, Record<string, string>> = {};
  for (const [key, list] of Object.entries(resources)) copy[key] = { ...(list as Record<string, string>) };
  return copy;
}

/**
 * The Pod's security context: the image's non-root user unless the spec names the data's owner; the
 * restricted Pod Security Standard's fields are fixed (the schema refuses uid 0).
 */
export function podSecurityContext(custom: PodSecurity | undefined): IPodSecurityContext {
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

/** The runner container's security context (restricted Pod Security Standard). */
export function containerSecurityContext(): ISecurityContext {
  return { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } };
}

/** `s3://bucket[/prefix]`. */
export function objectStoreUrl(store: ObjectStore): string {
  return `s3://${store.bucket}${store.prefix === undefined ? '' : `/${store.prefix}`}`;
}

/** How to reach the bucket: endpoint, region, path style, CA file, plain http (never a credential). */
export function objectStoreFlags(store: ObjectStore): string[] {
  const flags = OBJECT_STORE_FLAGS;
  return [
    ...(store.endpoint === undefined ? [] : [`${flags.endpoint}=${store.endpoint}`]),
    ...(store.region === undefined ? [] : [`${flags.region}=${store.region}`]),
    ...(store.forcePathStyle === true ? [flags.forcePathStyle] : []),
    ...(store.caSecretName === undefined ? [] : [`${flags.caFile}=${S3_CA_MOUNT_PATH}/${S3_CA_KEY}`]),
    ...(store.allowHttp === true ? [flags.allowHttp] : []),
  ];
}

/**
 * The object store credentials as secretKeyRef env vars, each from the same key of the Secret: the
 * kubelet resolves them in the Pod, so they never appear in the Job, its arguments, the controller's
 * memory or its logs, and the controller needs no access to Secrets.
 */
export function credentialEnv(store: ObjectStore | undefined): IEnvVar[] {
  if (store === undefined) return [];
  return CREDENTIAL_ENV_VARS.map((name) => ({
    name,
    valueFrom: { secretKeyRef: { name: store.credentialsSecretName, key: name, ...(OPTIONAL_CREDENTIAL_ENV_VARS.includes(name) ? { optional: true } : {}) } },
  }));
}

/** The private CA of the object store's endpoint, when it names one: only ca.crt, read-only. */
export function s3CaVolume(store: ObjectStore | undefined): { volume: IVolume; mount: IVolumeMount } | undefined {
  if (store?.caSecretName === undefined) return undefined;
  // Only ca.crt: a CA Secret made by cert-manager also holds a private key the runner has no use for.
  return {
    volume: { name: 's3-ca', secret: { secretName: store.caSecretName, defaultMode: 0o440, items: [{ key: S3_CA_KEY, path: S3_CA_KEY }] } },
    mount: { name: 's3-ca', mountPath: S3_CA_MOUNT_PATH, readOnly: true },
  };
}

/** What differs between a backup's and a restore's runner Pod. */
export interface RunnerPod {
  readonly containerName: string;
  readonly image: string;
  readonly args: string[];
  readonly env: IEnvVar[];
  readonly resources: { readonly requests?: ResourceList; readonly limits?: ResourceList } | undefined;
  readonly podSecurity: PodSecurity | undefined;
  readonly mounts: IVolumeMount[];
  readonly volumes: IVolume[];
}

/** The Pod spec of a runner: one container, no API access, restricted, never restarted in place. */
export function runnerPodSpec(pod: RunnerPod): IPodSpec {
  return {
    // Never: each retry is a fresh Pod whose logs survive; backoffLimit counts them.
    restartPolicy: 'Never',
    // The runner needs no Kubernetes API access.
    automountServiceAccountToken: false,
    securityContext: podSecurityContext(pod.podSecurity),
    containers: [
      {
        name: pod.containerName,
        image: pod.image,
        args: pod.args,
        env: pod.env,
        resources: copyResources(pod.resources),
        securityContext: containerSecurityContext(),
        volumeMounts: pod.mounts,
      },
    ],
    volumes: pod.volumes,
  };
}
