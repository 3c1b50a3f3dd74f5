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
 * Status is unchanged. Everything derived from the v1alpha1 schema is derived from this one the same way
 * (types in imports/backupschedule-v1.ts, the precompiled validator, the CRD openAPIV3Schema).
 */
import { backupScheduleSchema, type SchemaNode } from './schema.ts';
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

/** The retention rule names of v1, in restic's order. */
export const RETENTION_RULES = ['keepLast', 'keepDaily', 'keepWeekly', 'keepMonthly'] as const;

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
  'x-kubernetes-validations': Object.entries(SOURCE_TYPES).map(([member, type]) => ({
    rule: `(self.type == '${type}') == has(self.${member})`,
    message: `${member} must be set exactly when type is ${type}`,
    fieldPath: `.${member}`,
  })),
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

const specV1 = alpha('spec');

/** The `kubelings.dev/v1` BackupSchedule JSON Schema (object root: apiVersion, kind, metadata, spec, status). */
export const backupScheduleV1Schema: SchemaNode = {
  ...backupScheduleSchema,
  description:
    'BackupSchedule backs up etcd or a PersistentVolumeClaim on a cron schedule into a PersistentVolumeClaim, ' +
    'keeping backups by grandfather-father-son rules. The operator reconciles each BackupSchedule into a CronJob of the same namespace.',
  properties: {
    ...propertiesOf(backupScheduleSchema),
    spec: { ...specV1, properties: { ...propertiesOf(specV1), source: sourceV1, retention: retentionV1 } },
  },
};
