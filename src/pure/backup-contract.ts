/**
 * The contract between buildCronJob and the `backup` subcommand of the project image (src/backup/;
 * README "Backup container contract" documents the same).
 *
 *   <image entrypoint> backup --source=etcd --etcd-endpoints=<url,url> [--etcd-tls-dir=/etc/backup/etcd-tls]
 *                             --destination-dir=/backup/destination[/<path>] <retention>
 *   <image entrypoint> backup --source=pvc --source-dir=/backup/source
 *                             --destination-dir=/backup/destination[/<path>] <retention>
 *
 *   <image entrypoint> backup --source=etcd|pvc … --destination-url=s3://<bucket>[/<prefix>] [--s3-endpoint=<url>]
 *                             [--s3-region=<r>] [--s3-force-path-style] [--s3-ca-file=/etc/backup/s3-ca/ca.crt]
 *                             [--s3-allow-http] [--age-recipient=age1…]... <retention>
 *   (--age-recipient goes with --destination-dir too: spec.encryption applies to any destination)
 *
 *   <retention>: [--keep-last=<N>] [--keep-daily=<N>] [--keep-weekly=<N>] [--keep-monthly=<N>]
 *
 * One flag per rule set in the schedule's v1 spec.retention, in that order (a v1alpha1 schedule is read
 * through its v1 form, so it gets --keep-last only); no retention at all means --keep-last=7, the
 * default the CRD applies.
 *
 * Environment: BACKUP_SCHEDULE_NAMESPACE, BACKUP_SCHEDULE_NAME (the owner), TMPDIR=/tmp; to an object
 * store also AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and (optional) AWS_SESSION_TOKEN, each a
 * secretKeyRef to the same key of spec.destination.objectStore.credentialsSecretName (never an argument).
 * Mounts: the destination claim read-write at /backup/destination; a source claim read-only at
 * /backup/source; the etcd TLS Secret read-only at /etc/backup/etcd-tls (ca.crt, tls.crt, tls.key);
 * a writable emptyDir at /tmp (the root filesystem is read-only; an etcd snapshot bound for an object store,
 * or encrypted to a claim, is staged there, so that emptyDir then has a sizeLimit of {@link ETCD_SCRATCH_SIZE_LIMIT}); the
 * object store's CA Secret's ca.crt read-only at /etc/backup/s3-ca/ca.crt.
 * The Pod runs as {@link BACKUP_USER_ID} unless spec.podSecurityContext names other IDs.
 * Exit code 0 = backup written, verified and what no --keep-* rule keeps pruned; 1 = failed; 2 = usage;
 * 3 = volume archive written but incomplete (files changed while read); 4 = written and verified,
 * pruning failed. The Job retries 1 and 2; its podFailurePolicy fails it at once on 3 and 4.
 */

/** First argument of the container: selects the runner in the project image. */
export const BACKUP_SUBCOMMAND = 'backup';
/** Mount path of the destination claim. */
export const DESTINATION_MOUNT_PATH = '/backup/destination';
/** Mount path of a source claim (read-only). */
export const SOURCE_MOUNT_PATH = '/backup/source';
/** Mount path of the etcd client TLS Secret (read-only). */
export const ETCD_TLS_MOUNT_PATH = '/etc/backup/etcd-tls';
/** Mount path of the object store's CA Secret (read-only): only its `ca.crt` is projected. */
export const S3_CA_MOUNT_PATH = '/etc/backup/s3-ca';
/** The key of the CA Secret the runner trusts (`--s3-ca-file`), as in the etcd TLS Secret and cert-manager's. */
export const S3_CA_KEY = 'ca.crt';
/**
 * The runner's object-store flags (src/backup/object-store/object-store-args.ts parses them; a test
 * checks both sides agree by parsing what buildCronJob emits).
 */
export const OBJECT_STORE_FLAGS = {
  destinationUrl: '--destination-url',
  endpoint: '--s3-endpoint',
  region: '--s3-region',
  forcePathStyle: '--s3-force-path-style',
  caFile: '--s3-ca-file',
  allowHttp: '--s3-allow-http',
  ageRecipient: '--age-recipient',
} as const;
/**
 * The environment variables the runner reads object store credentials from (every S3 tool's names),
 * each filled from the same key of the credentials Secret; the last one is optional (temporary credentials).
 */
export const CREDENTIAL_ENV_VARS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'] as const;
/** Of {@link CREDENTIAL_ENV_VARS}, the ones a credentials Secret may leave out. */
export const OPTIONAL_CREDENTIAL_ENV_VARS: readonly string[] = ['AWS_SESSION_TOKEN'];
/**
 * The `sizeLimit` of the scratch emptyDir when an etcd snapshot is staged there on its way to an object
 * store or through encryption to a claim: etcd's largest supported backend (--quota-backend-bytes, 8 GiB suggested maximum), which bounds
 * the snapshot. Past it the kubelet evicts the Pod, rather than let it fill the node's disk.
 */
export const ETCD_SCRATCH_SIZE_LIMIT = '8Gi';
/** Mount path of the writable scratch directory. */
export const TMP_MOUNT_PATH = '/tmp';
/** Env var: namespace of the owning BackupSchedule. */
export const ENV_SCHEDULE_NAMESPACE = 'BACKUP_SCHEDULE_NAMESPACE';
/** Env var: name of the owning BackupSchedule. */
export const ENV_SCHEDULE_NAME = 'BACKUP_SCHEDULE_NAME';
/** Name of the backup container in the Pod template. */
export const BACKUP_CONTAINER_NAME = 'backup';
/** UID/GID the backup runs as by default (the distroless "nonroot" user). */
export const BACKUP_USER_ID = 65532;
/** Exit code: a volume archive was written and verified, but files changed while it was read. */
export const EXIT_INCOMPLETE = 3;
/** Exit code: the backup was written and verified, but retention could not delete. */
export const EXIT_PRUNE_FAILED = 4;
/**
 * Exit codes a retry cannot fix, which the Job template's podFailurePolicy makes final: the volume keeps
 * changing (a retry only tears another archive), or the backup is in place and a retry would add
 * another one and fail to prune again.
 */
export const FINAL_EXIT_CODES: readonly number[] = [EXIT_INCOMPLETE, EXIT_PRUNE_FAILED];
