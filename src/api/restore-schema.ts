/**
 * The single source of truth for the Restore API (`kubelings.dev/v1`, kind Restore, short name `rst`):
 * one JSON Schema of the whole object, from which the types (imports/restore.ts), the compiled
 * validator, the CRD's openAPIV3Schema and the editor JSON Schema are derived by the same mechanism as
 * BackupSchedule's. Every node a BackupSchedule also has is taken from the BackupSchedule v1 schema, not
 * rewritten: the destination members (`persistentVolumeClaim`, `objectStore`), the image, resources,
 * Pod security context and condition, so the two kinds cannot drift apart. A Restore runs once: its
 * spec is immutable (a CEL transition rule, which the API server applies on update only).
 */
import { DNS1123_SUBDOMAIN, MAX_CONDITIONS, type SchemaNode } from './schema.ts';
import { backupScheduleV1Schema } from './schema-v1.ts';

type Properties = Readonly<Record<string, SchemaNode>>;

/** The BackupSchedule v1 node at a property path (it must exist: checked when this module loads). */
function fromBackupSchedule(...path: string[]): SchemaNode {
  let node = backupScheduleV1Schema;
  for (const name of path) {
    const next = (node['properties'] as Properties | undefined)?.[name];
    if (next === undefined) throw new Error(`the BackupSchedule v1 schema has no property ${path.join('.')}`);
    node = next;
  }
  return node;
}

/** The kind. */
export const RESTORE_KIND = 'Restore';
/** The resource's plural name. */
export const RESTORE_PLURAL = 'restores';
/** `kubectl get rst`. */
export const RESTORE_SHORT_NAMES: readonly string[] = ['rst'];
/** The members of `spec.from`, exactly one of which is set. */
export const RESTORE_FROM_MEMBERS = ['backupScheduleName', 'persistentVolumeClaim', 'objectStore'] as const;
/** The phases of `status.phase`. */
export const RESTORE_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed'] as const;
/** `spec.backup` to restore the newest backup that verifies. */
export const LATEST_BACKUP = 'latest';
/** A backup file (src/backup/backup-names.ts) or object (`.db|.tar` + `.zst|.gz` + `.age`) name as the runner writes it, or `latest`. */
export const BACKUP_NAME_PATTERN = '^(latest|[a-z0-9]([-a-z0-9.]*[a-z0-9])?-[0-9]{8}T[0-9]{6}Z(\\.incomplete)?\\.(db|tar)(\\.(zst|gz))?(\\.age)?)$';
/** The message of the immutability rule. */
export const SPEC_IMMUTABLE_MESSAGE = 'spec is immutable: a Restore runs once; delete it and create a new Restore to restore again';

const claimName = (whose: string): SchemaNode => ({ ...(fromBackupSchedule('spec', 'destination', 'persistentVolumeClaim', 'claimName')), description: `Name of the PersistentVolumeClaim ${whose}, in the Restore's namespace.` });
const claimPath = fromBackupSchedule('spec', 'destination', 'persistentVolumeClaim', 'path');

const from: SchemaNode = {
  type: 'object',
  title: 'RestoreSource',
  description:
    'Where the backup is read from: exactly one of backupScheduleName (that BackupSchedule\'s destination, read by the controller) or an explicit destination (persistentVolumeClaim or objectStore, as in a BackupSchedule\'s spec.destination).',
  'x-kubernetes-validations': [
    {
      rule: `[${RESTORE_FROM_MEMBERS.map((m) => `has(self.${m})`).join(', ')}].filter(x, x).size() == 1`,
      message: `exactly one of ${RESTORE_FROM_MEMBERS.join(', ')} must be set`,
    },
  ],
  properties: {
    backupScheduleName: {
      type: 'string',
      minLength: 1,
      maxLength: 253,
      pattern: DNS1123_SUBDOMAIN,
      description: 'A BackupSchedule in the Restore\'s namespace: its destination is where the backup is read from, and latest means its newest backup.',
    },
    persistentVolumeClaim: { ...fromBackupSchedule('spec', 'destination', 'persistentVolumeClaim'), description: 'A PersistentVolumeClaim holding backups, as a BackupSchedule\'s spec.destination.persistentVolumeClaim names it (mounted read-only).' },
    objectStore: { ...fromBackupSchedule('spec', 'destination', 'objectStore'), description: 'An S3 (or S3-compatible) bucket holding backups, as a BackupSchedule\'s spec.destination.objectStore names it.' },
  },
};

const target: SchemaNode = {
  type: 'object',
  title: 'RestoreTarget',
  description: 'Where the backup is written: a volume archive is extracted into the directory; an etcd snapshot is written there as the verified, decrypted .db file that etcdutl snapshot restore takes.',
  required: ['persistentVolumeClaim'],
  properties: {
    persistentVolumeClaim: {
      type: 'object',
      title: 'RestoreTargetClaim',
      description: 'The PersistentVolumeClaim written to, mounted read-write by the restore Pod.',
      required: ['claimName'],
      properties: {
        claimName: claimName('the backup is restored into'),
        path: { ...claimPath, description: 'Directory inside the claim, relative (no leading "/", no ".." segments), created when missing. Defaults to the claim\'s root.' },
      },
    },
    overwrite: {
      type: 'boolean',
      description: 'Restore into a directory that is not empty, replacing files of the same names (a directory in the way of a file fails the restore). Default false: a non-empty directory (other than lost+found) fails the restore before anything is written.',
    },
  },
};

const backupStatus: SchemaNode = {
  type: 'object',
  title: 'RestoredBackup',
  description: 'The backup that was restored (or is being restored), as the runner verified it.',
  properties: {
    name: { type: 'string', maxLength: 512, description: 'File or object name of the backup.' },
    time: { type: 'string', format: 'date-time', description: 'When the backup was taken (from its name).' },
    size: { type: 'integer', format: 'int64', minimum: 0, description: 'Size of the backup file in bytes.' },
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the backup file, hex, as its .sha256 sidecar records it.' },
  },
};

/** The `kubelings.dev/v1` Restore JSON Schema (object root: apiVersion, kind, metadata, spec, status). */
export const restoreSchema: SchemaNode = {
  type: 'object',
  title: 'Restore',
  description:
    'Restore writes one backup of a BackupSchedule (or from an explicit PersistentVolumeClaim or bucket) into a PersistentVolumeClaim: ' +
    'a volume archive is extracted, an etcd snapshot is written as the .db file etcdutl snapshot restore takes. The operator runs it as one Job, once; the backup is verified before anything is written.',
  required: ['spec'],
  properties: {
    apiVersion: fromBackupSchedule('apiVersion'),
    kind: fromBackupSchedule('kind'),
    metadata: fromBackupSchedule('metadata'),
    spec: {
      type: 'object',
      title: 'RestoreSpec',
      description: 'Which backup to restore, from where, and into which volume. Immutable.',
      required: ['from', 'backup', 'target'],
      'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: SPEC_IMMUTABLE_MESSAGE }],
      properties: {
        from,
        backup: {
          type: 'string',
          minLength: 1,
          maxLength: 512,
          pattern: BACKUP_NAME_PATTERN,
          description: 'The backup\'s file (or object) name, e.g. "nightly-20261130T020007Z.tar.gz", or latest: the newest backup that verifies (never an .incomplete archive unless allowIncomplete).',
        },
        allowIncomplete: {
          type: 'boolean',
          description: 'Allow an .incomplete archive (files changed while it was written): named in backup, or considered by latest. Default false.',
        },
        target,
        decryption: {
          type: 'object',
          title: 'RestoreDecryption',
          description: 'How encrypted (age) backups are decrypted.',
          required: ['identitySecretName'],
          properties: {
            identitySecretName: {
              type: 'string',
              minLength: 1,
              maxLength: 253,
              pattern: DNS1123_SUBDOMAIN,
              description: 'Secret in the Restore\'s namespace whose key "identity" holds the age identity (AGE-SECRET-KEY-1…), mounted read-only into the restore Pod only.',
            },
          },
        },
        activeDeadlineSeconds: { ...fromBackupSchedule('spec', 'activeDeadlineSeconds'), description: 'Time limit of the restore Job in seconds. Unset: none.' },
        resources: fromBackupSchedule('spec', 'resources'),
        podSecurityContext: fromBackupSchedule('spec', 'podSecurityContext'),
        image: { ...fromBackupSchedule('spec', 'image'), description: 'Container image that runs the restore (its "backup restore" subcommand). Defaults to the operator\'s --backup-image; it must match --allowed-backup-images.' },
      },
    },
    status: {
      type: 'object',
      title: 'RestoreStatus',
      description: 'Observed state, written only by the controller through the status subresource.',
      properties: {
        observedGeneration: fromBackupSchedule('status', 'observedGeneration'),
        phase: { type: 'string', enum: [...RESTORE_PHASES], description: 'Pending (no Job yet), Running, Succeeded or Failed.' },
        jobName: { type: 'string', maxLength: 63, description: 'Name of the restore Job.' },
        backup: backupStatus,
        conditions: { ...fromBackupSchedule('status', 'conditions'), maxItems: MAX_CONDITIONS, description: 'Current conditions: Complete or Failed once the Job has ended, with the runner\'s message.' },
      },
    },
  },
};
