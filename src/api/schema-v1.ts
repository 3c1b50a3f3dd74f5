/**
 * The `kubelings.dev/v1` BackupSchedule schema, derived from the v1alpha1 one (src/api/schema.ts): the
 * same tree with two nodes replaced, so every field the versions share is written once. What v1 changes,
 * and why (Kubernetes API conventions, api-conventions.md):
 * - `spec.retention`: grandfather-father-son rules as restic and k8up users know them (`keepLast`,
 *   `keepDaily`, `keepWeekly`, `keepMonthly`; at least one). Leaving retention out still means keepLast 7
 *   (the default moved from the field to the object, so a keepDaily-only policy does not also keep the last 7).
 * - `spec.source`: a union with a discriminator, `type: Etcd | PersistentVolumeClaim` naming the member
 *   that is set, as the conventions ask of unions ("Unions"): clients switch on `type`, and a future
 *   member (an object store) is a new enum value rather than a guess from which field is present. `type`
 *   is required (no default: no static default could be right for both members); conversion from
 *   v1alpha1 derives it from the member present, so nothing is lost either way.
 * - `spec.destination`: the same kind of union, `type: PersistentVolumeClaim | ObjectStore`. Unlike the
 *   source's, this `type` has a structural default (PersistentVolumeClaim): every v1 object stored by
 *   0.2.0 has a claim and no type, and the API server applies the default when it reads them from etcd,
 *   so they stay valid and build the same child.
 * - `spec.encryption`: age X25519 recipients (public keys only) every backup is encrypted to.
 * Status is unchanged. Everything derived from the v1alpha1 schema is derived from this one the same way
 * (types in imports/backupschedule-v1.ts, the precompiled validator, the CRD openAPIV3Schema).
 */
import { backupScheduleSchema, DNS1123_SUBDOMAIN, type SchemaNode } from './schema.ts';
import { withoutKeywords } from './schema-keywords.ts';

type Properties = Readonly<Record<string, SchemaNode>>;
const propertiesOf = (node: SchemaNode): Properties => node['properties'] as Properties;
/** The v1alpha1 node at a property path (which must exist: the derivation is checked at load). */
function alpha(...path: string[]): SchemaNode {
  let node = backupScheduleSchema;
  for (const name of path) {
    const next = propertiesOf(node)[name];
    if (next === undefined) throw new Error(`v1alpha1 schema has no property ${path.join('.')}`);
    node = next;
  }
  return node;
}

/** The values of the v1 source discriminator, each the member field's name in PascalCase. */
export const SOURCE_TYPES = { etcd: 'Etcd', persistentVolumeClaim: 'PersistentVolumeClaim' } as const;

/** The values of the v1 destination discriminator, each the member field's name in PascalCase. */
export const DESTINATION_TYPES = { persistentVolumeClaim: 'PersistentVolumeClaim', objectStore: 'ObjectStore' } as const;

/** The destination type of a v1 object stored before the field existed (0.2.0): its structural default. */
export const DEFAULT_DESTINATION_TYPE = DESTINATION_TYPES.persistentVolumeClaim;

/** The most age recipients a schedule may name (each one adds a 200-byte stanza to every backup's header). */
export const MAX_AGE_RECIPIENTS = 16;

/**
 * An age X25519 recipient as `age-keygen` prints it: bech32 with the human-readable part `age`, 32 bytes
 * of key in 52 characters plus a 6-character checksum, lower case (age itself writes no other form).
 * The checksum is the validator's check (src/api/age-recipient.ts): a pattern cannot compute it.
 */
export const AGE_RECIPIENT_PATTERN = '^age1[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{58}$';

/** S3 bucket naming rules: 3-63 of lower case letters, digits, '.' and '-', starting and ending with a letter or digit. */
export const BUCKET_PATTERN = '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$';

/** A key prefix: relative, `/`-separated segments of S3's safe characters (the separator is added by the runner). */
export const PREFIX_PATTERN = '^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$';

/**
 * An S3-compatible server's URL: http(s), one DNS name, IPv4 or [IPv6] host and an optional port, nothing
 * after it (a path would be taken for the bucket by path-style addressing).
 */
export const S3_ENDPOINT_PATTERN =
  '^https?://([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?$';

/** An S3 region name as the runner accepts it (`--s3-region`). */
export const REGION_PATTERN = '^[a-z0-9-]{1,64}$';

/** The retention rule names of v1, in restic's order. */
export const RETENTION_RULES = ['keepLast', 'keepDaily', 'keepWeekly', 'keepMonthly'] as const;

/**
 * The CEL rule of one member of a union whose `type` names the one member that is set: the member is set
 * exactly when type is its value (one rule a member, so the error names the member's field). The
 * schema's source and destination unions and their TypeScript twins (src/api/cel-rules.ts) use it.
 */
export function unionMemberRule(member: string, type: string): { rule: string; message: string; fieldPath: string } {
  return {
    rule: `(self.type == '${type}') == has(self.${member})`,
    message: `${member} must be set exactly when type is ${type}`,
    fieldPath: `.${member}`,
  };
}

const count = (what: string): SchemaNode => ({
  type: 'integer',
  minimum: 1,
  maximum: 1000,
  description: `Keep the newest backup of each of the N newest ${what} that have backups.`,
});

const sourceV1: SchemaNode = {
  ...alpha('spec', 'source'),
  description:
    'What to back up: a union; type names the one member that is set (Etcd: etcd, PersistentVolumeClaim: persistentVolumeClaim).',
  required: ['type'],
  'x-kubernetes-validations': Object.entries(SOURCE_TYPES).map(([member, type]) => unionMemberRule(member, type)),
  properties: {
    type: {
      type: 'string',
      enum: Object.values(SOURCE_TYPES),
      description: 'Which member of the union is set: Etcd or PersistentVolumeClaim.',
    },
    ...propertiesOf(alpha('spec', 'source')),
  },
};

const retentionV1: SchemaNode = {
  type: 'object',
  title: 'Retention',
  default: { keepLast: 7 },
  description:
    'Which backups to keep after each successful backup, as restic forget does: a backup is kept if any rule keeps it. ' +
    'At least one rule; left out entirely, keepLast 7.',
  'x-kubernetes-validations': [
    {
      rule: RETENTION_RULES.map((rule) => `has(self.${rule})`).join(' || '),
      message: `at least one of ${RETENTION_RULES.join(', ')} must be set`,
    },
  ],
  properties: {
    // v1alpha1's bounds; no field default (it would add keepLast 7 to every keepDaily-only policy).
    keepLast: { ...(withoutKeywords(alpha('spec', 'retention', 'keepLast'), new Set(['default'])) as SchemaNode), description: 'Keep the N most recent backups.' },
    keepDaily: count('UTC days'),
    keepWeekly: count('ISO weeks (Monday to Sunday, UTC)'),
    keepMonthly: count('UTC months'),
  },
};

const secretName = (description: string): SchemaNode => ({ type: 'string', minLength: 1, maxLength: 253, pattern: DNS1123_SUBDOMAIN, description });

const objectStore: SchemaNode = {
  type: 'object',
  title: 'ObjectStoreDestination',
  description:
    'An S3 (or S3-compatible) bucket that receives the backups, written by the backup Pod with the credentials of credentialsSecretName. ' +
    'Objects are named <prefix>/<schedule>-<yyyymmddThhmmssZ>.<db|tar>.zst[.age], each with a .sha256 sidecar.',
  required: ['bucket', 'credentialsSecretName'],
  'x-kubernetes-validations': [
    {
      rule: "!has(self.endpoint) || self.endpoint.startsWith('https://') || (has(self.allowHttp) && self.allowHttp)",
      message: 'endpoint must use https:// unless allowHttp is true',
      fieldPath: '.endpoint',
    },
  ],
  properties: {
    bucket: {
      type: 'string',
      minLength: 3,
      maxLength: 63,
      pattern: BUCKET_PATTERN,
      'x-kubernetes-validations': [
        { rule: "!self.contains('..')", message: 'bucket must not contain two adjacent periods' },
        { rule: "!self.matches('^[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+$')", message: 'bucket must not be formatted as an IP address' },
      ],
      description: 'Bucket name (S3 naming rules: 3-63 characters of a-z, 0-9, "." and "-", starting and ending with a letter or digit, no "..", not an IP address).',
    },
    prefix: {
      type: 'string',
      maxLength: 512,
      pattern: PREFIX_PATTERN,
      'x-kubernetes-validations': [
        { rule: "!self.split('/').exists(s, s == '.' || s == '..')", message: 'prefix must not contain "." or ".." segments' },
      ],
      description: 'Key prefix inside the bucket, e.g. "prod/etcd": relative (no leading "/"), without "." or ".." segments. Defaults to the bucket\'s top level.',
    },
    endpoint: {
      type: 'string',
      maxLength: 256,
      pattern: S3_ENDPOINT_PATTERN,
      description:
        'URL of an S3-compatible server (scheme, host, optional port), e.g. "https://minio.storage:9000"; https:// unless allowHttp is true. Unset: AWS S3 of the region. ' +
        'The operator must allow it (controller flag --allowed-backup-endpoints; by default only AWS S3, i.e. no endpoint, is).',
    },
    allowHttp: {
      type: 'boolean',
      description: 'Allow a plain http:// endpoint: the credentials\' signatures and the backups (unless encrypted) cross the network in clear. Default false.',
    },
    region: {
      type: 'string',
      pattern: REGION_PATTERN,
      maxLength: 64,
      description: 'Region of the bucket, e.g. "eu-central-1". Unset: us-east-1 (S3-compatible servers mostly ignore it).',
    },
    forcePathStyle: {
      type: 'boolean',
      description: 'Address the bucket as https://endpoint/bucket instead of https://bucket.endpoint (most S3-compatible servers need it). Default false.',
    },
    credentialsSecretName: secretName(
      'Secret in the BackupSchedule\'s namespace with the keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and optionally AWS_SESSION_TOKEN), ' +
        'passed to the backup container as environment variables; the operator never reads it.',
    ),
    caSecretName: secretName(
      'Secret in the BackupSchedule\'s namespace whose ca.crt (PEM) is trusted for the endpoint besides the system CAs, for a private CA; mounted read-only.',
    ),
  },
};

// v1alpha1's `required: ['persistentVolumeClaim']` goes: the CEL rules below tie the member to type.
const { required: _claimRequired, ...alphaDestination } = alpha('spec', 'destination');

const destinationV1: SchemaNode = {
  ...alphaDestination,
  description:
    'Where backups are written: a union; type names the one member that is set (PersistentVolumeClaim: persistentVolumeClaim, ObjectStore: objectStore).',
  'x-kubernetes-validations': Object.entries(DESTINATION_TYPES).map(([member, type]) => unionMemberRule(member, type)),
  properties: {
    type: {
      type: 'string',
      enum: Object.values(DESTINATION_TYPES),
      default: DEFAULT_DESTINATION_TYPE,
      description: 'Which member of the union is set: PersistentVolumeClaim (the default) or ObjectStore.',
    },
    ...propertiesOf(alphaDestination),
    objectStore,
  },
};

const encryption: SchemaNode = {
  type: 'object',
  title: 'BackupEncryption',
  description:
    'Encrypt every backup with age (age-encryption.org) to these recipients before it leaves the Pod. The cluster holds public keys only: ' +
    'neither the destination\'s credentials nor the cluster can read the backups; the matching identities (secret keys) decrypt them.',
  required: ['ageRecipients'],
  properties: {
    ageRecipients: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_AGE_RECIPIENTS,
      'x-kubernetes-list-type': 'set',
      description: `age X25519 public keys (age1…, as age-keygen prints them), 1 to ${MAX_AGE_RECIPIENTS}; any one matching identity decrypts a backup.`,
      items: { type: 'string', minLength: 62, maxLength: 62, pattern: AGE_RECIPIENT_PATTERN, description: 'One age X25519 recipient, e.g. "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p".' },
    },
  },
};

const specV1 = alpha('spec');

/** `properties` with `added` placed right after `key` (property order is what `kubectl explain` and the reference show). */
function insertAfter(properties: Properties, key: string, added: Properties): Properties {
  return Object.fromEntries(Object.entries(properties).flatMap(([k, v]) => (k === key ? [[k, v], ...Object.entries(added)] : [[k, v]])));
}

/** The spec-level rule of v1alpha1 (source and destination claims differ), for a destination that may have no claim. */
export const SAME_CLAIM_RULE_V1 = {
  rule:
    '!has(self.source.persistentVolumeClaim) || !has(self.destination.persistentVolumeClaim) || ' +
    'self.source.persistentVolumeClaim.claimName != self.destination.persistentVolumeClaim.claimName',
  message: 'source.persistentVolumeClaim.claimName must differ from destination.persistentVolumeClaim.claimName',
  fieldPath: '.destination.persistentVolumeClaim.claimName',
} as const;

/** The `kubelings.dev/v1` BackupSchedule JSON Schema (object root: apiVersion, kind, metadata, spec, status). */
export const backupScheduleV1Schema: SchemaNode = {
  ...backupScheduleSchema,
  description:
    'BackupSchedule backs up etcd or a PersistentVolumeClaim on a cron schedule into a PersistentVolumeClaim or an S3 bucket, ' +
    'keeping backups by grandfather-father-son rules. The operator reconciles each BackupSchedule into a CronJob of the same namespace.',
  properties: {
    ...propertiesOf(backupScheduleSchema),
    spec: {
      ...specV1,
      'x-kubernetes-validations': [SAME_CLAIM_RULE_V1],
      properties: insertAfter({ ...propertiesOf(specV1), source: sourceV1, destination: destinationV1, retention: retentionV1 }, 'destination', { encryption }),
    },
  },
};
