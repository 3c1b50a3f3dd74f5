/**
 * The BackupSchedule as a standalone JSON Schema (draft 7) for editors (yaml-language-server) and CI
 * (kubeconform, ajv), derived from the one schema: the validator's view of it (unknown fields are
 * errors, lists of type set unique), `apiVersion`/`kind`/`metadata.name` pinned, the Kubernetes-only
 * keywords removed, and each CEL rule that JSON Schema can express translated. What it cannot express
 * (cron field ranges, time-zone names, two claims being different) only `backupschedule validate` checks.
 */
import { TIME_ZONE_NAMES } from './time-zone-names.ts';
import { CEL_RULES } from './cel-rules.ts';
import { GROUP_VERSION, KIND } from './constants.ts';
import { backupScheduleSchema, DNS1123_SUBDOMAIN, type SchemaNode } from './schema.ts';
import { withoutKeywords } from './schema-keywords.ts';
import { closeObjects } from './validator-schema.ts';

/** File name in kubeconform's `{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json` convention. */
export const JSON_SCHEMA_FILE = `${KIND.toLowerCase()}_${GROUP_VERSION.split('/')[1] ?? ''}.json`;

/**
 * CEL rules (by their text) in JSON Schema, merged into the node that carries the rule. A rule missing
 * here is one JSON Schema cannot express; test/api/json-schema.test.ts lists those.
 */
export const CEL_AS_JSON_SCHEMA: Readonly<Record<string, SchemaNode>> = {
  '(has(self.etcd) ? 1 : 0) + (has(self.persistentVolumeClaim) ? 1 : 0) == 1': {
    oneOf: [{ required: ['etcd'] }, { required: ['persistentVolumeClaim'] }],
  },
  "!has(self.tlsSecretName) || self.endpoints.all(e, e.startsWith('https://'))": {
    if: { required: ['tlsSecretName'] },
    then: { properties: { endpoints: { items: { pattern: '^https://' } } } },
  },
  "!self.split('/').exists(s, s == '..')": { not: { pattern: '(^|/)\\.\\.(/|$)' } },
};

/** Keywords only the API server or the type generator understand (closeObjects turned int32/int64 into bounds). */
const DROPPED = new Set(['tsType', 'x-kubernetes-validations', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys']);


/** The node at a property path of a schema. */
function nodeAt(root: Record<string, unknown>, path: readonly string[]): Record<string, unknown> {
  let node = root;
  for (const name of path) node = (node['properties'] as Record<string, Record<string, unknown>>)[name] ?? {};
  return node;
}

/** The editor/CI JSON Schema of a BackupSchedule. Deterministic. */
export function toEditorJsonSchema(): SchemaNode {
  const closed = withoutKeywords(closeObjects(backupScheduleSchema, true), DROPPED) as Record<string, unknown>;
  for (const rule of CEL_RULES) Object.assign(nodeAt(closed, rule.path), CEL_AS_JSON_SCHEMA[rule.rule] ?? {});
  // The names Go's time.LoadLocation knows, so editors complete them and CI catches `utc` or a typo.
  Object.assign(nodeAt(closed, ['spec', 'timeZone']), { enum: [...TIME_ZONE_NAMES, 'UTC'].filter((name, i, all) => all.indexOf(name) === i).sort() });
  const properties = closed['properties'] as Record<string, SchemaNode>;
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    ...closed,
    required: ['apiVersion', 'kind', 'metadata', 'spec'],
    properties: {
      ...properties,
      apiVersion: { ...properties['apiVersion'], enum: [GROUP_VERSION] },
      kind: { ...properties['kind'], enum: [KIND] },
      metadata: {
        type: 'object',
        description: 'Standard object metadata.',
        required: ['name'],
        properties: {
          name: { type: 'string', maxLength: 253, pattern: DNS1123_SUBDOMAIN, description: 'Name of the BackupSchedule (a DNS-1123 subdomain).' },
          namespace: { type: 'string', maxLength: 63, description: 'Namespace of the BackupSchedule; its CronJob lives there too.' },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          annotations: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
    },
  };
}
