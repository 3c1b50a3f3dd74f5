/**
 * The BackupSchedule (and the Restore) as a standalone JSON Schema (draft 7) for editors (yaml-language-server) and CI
 * (kubeconform, ajv), one per served version, derived from that version's schema: the validator's view
 * of it (unknown fields are errors, lists of type set unique), `apiVersion`/`kind`/`metadata.name`
 * pinned, the Kubernetes-only keywords removed, and each CEL rule that JSON Schema can express
 * translated. What it cannot express (cron field ranges, time-zone names, two claims being different)
 * only `backupschedule validate` checks.
 */
import { TIME_ZONE_NAMES } from './time-zone-names.ts';
import { CEL_RULES, CEL_RULES_V1, type CelRule } from './cel-rules.ts';
import { GROUP_VERSION, GROUP_VERSION_V1, KIND, type ServedGroupVersion } from './constants.ts';
import { backupScheduleSchema, DNS1123_SUBDOMAIN, type SchemaNode } from './schema.ts';
import { backupScheduleV1Schema, DEFAULT_DESTINATION_TYPE, DESTINATION_TYPES, RETENTION_RULES, SOURCE_TYPES } from './schema-v1.ts';
import { RESTORE_CEL_RULES } from './restore-cel-rules.ts';
import { RESTORE_FROM_MEMBERS, RESTORE_KIND, restoreSchema } from './restore-schema.ts';
import { withoutKeywords } from './schema-keywords.ts';
import { closeObjects } from './validator-schema.ts';

/** The file name of a version's schema, in kubeconform's `{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json` convention. */
export const jsonSchemaFile = (apiVersion: ServedGroupVersion): string => `${KIND.toLowerCase()}_${apiVersion.split('/')[1] ?? ''}.json`;
/** File name of the v1alpha1 schema (`backupschedule_v1alpha1.json`). */
export const JSON_SCHEMA_FILE = jsonSchemaFile(GROUP_VERSION);
/** File name of the v1 schema (`backupschedule_v1.json`). */
export const JSON_SCHEMA_FILE_V1 = jsonSchemaFile(GROUP_VERSION_V1);
/** File name of the Restore schema (`restore_v1.json`). */
export const RESTORE_JSON_SCHEMA_FILE = `${RESTORE_KIND.toLowerCase()}_${GROUP_VERSION_V1.split('/')[1] ?? ''}.json`;

/** What each served version's editor schema is derived from. */
const SOURCES: Readonly<Record<ServedGroupVersion, { readonly schema: SchemaNode; readonly celRules: readonly CelRule[] }>> = {
  [GROUP_VERSION]: { schema: backupScheduleSchema, celRules: CEL_RULES },
  [GROUP_VERSION_V1]: { schema: backupScheduleV1Schema, celRules: CEL_RULES_V1 },
};

/**
 * `required` as ajv's strict mode accepts it in a subschema: each required name also under `properties`
 * (as `true`, which checks nothing). ajv's strictRequired looks for a required name among the
 * properties defined so far at that level, and an applicator (`oneOf`, `if`, `not`) is compiled before
 * its parent's `properties`, so a bare `{ required: ['etcd'] }` fails `new Ajv({ strict: true })`.
 */
const requiring = (...names: string[]): SchemaNode => ({ required: names, properties: Object.fromEntries(names.map((name) => [name, true])) });

/**
 * CEL rules (by their text) in JSON Schema, merged into the node that carries the rule. A rule missing
 * here is one JSON Schema cannot express; test/api/json-schema.test.ts lists those.
 */
export const CEL_AS_JSON_SCHEMA: Readonly<Record<string, SchemaNode>> = {
  '(has(self.etcd) ? 1 : 0) + (has(self.persistentVolumeClaim) ? 1 : 0) == 1': {
    oneOf: [requiring('etcd'), requiring('persistentVolumeClaim')],
  },
  "!has(self.tlsSecretName) || self.endpoints.all(e, e.startsWith('https://'))": {
    if: requiring('tlsSecretName'),
    // Types restated: a strict ajv wants the type of every node whose keywords apply to one type only.
    then: { properties: { endpoints: { type: 'array', items: { type: 'string', pattern: '^https://' } } } },
  },
  "!self.split('/').exists(s, s == '..')": { not: { pattern: '(^|/)\\.\\.(/|$)' } },
  // v1: a union's discriminator names the member that is set, and no other member is. The source's and
  // the destination's PersistentVolumeClaim rules have the same text; the destination's type defaults to
  // PersistentVolumeClaim (the source's is required), so that member's `if` also holds when type is absent.
  ...Object.fromEntries(
    Object.entries({ ...SOURCE_TYPES, ...DESTINATION_TYPES }).map(([member, type]) => [
      `(self.type == '${type}') == has(self.${member})`,
      { if: { ...(type === DEFAULT_DESTINATION_TYPE ? {} : { required: ['type'] }), properties: { type: { const: type } } }, then: requiring(member), else: { not: requiring(member) } },
    ]),
  ),
  "!has(self.endpoint) || self.endpoint.startsWith('https://') || (has(self.allowHttp) && self.allowHttp)": {
    if: { required: ['endpoint'], properties: { endpoint: { type: 'string', pattern: '^http://' } } },
    then: { required: ['allowHttp'], properties: { allowHttp: { type: 'boolean', const: true } } },
  },
  "!self.contains('..')": { not: { pattern: '\\.\\.' } },
  "!self.matches('^[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+$')": { not: { pattern: '^[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+$' } },
  "!self.split('/').exists(s, s == '.' || s == '..')": { not: { pattern: '(^|/)\\.\\.?(/|$)' } },
  [RETENTION_RULES.map((rule) => `has(self.${rule})`).join(' || ')]: { anyOf: RETENTION_RULES.map((rule) => requiring(rule)) },
  // Restore's spec.from: exactly one member.
  [RESTORE_CEL_RULES[0]!.rule]: { oneOf: RESTORE_FROM_MEMBERS.map((member) => requiring(member)) },
};

/** Keywords only the API server or the type generator understand (closeObjects turned int32/int64 into bounds). */
const DROPPED = new Set(['tsType', 'x-kubernetes-validations', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys']);


/** The node at a property path of a schema. */
function nodeAt(root: Record<string, unknown>, path: readonly string[]): Record<string, unknown> {
  let node = root;
  for (const name of path) node = (node['properties'] as Record<string, Record<string, unknown>>)[name] ?? {};
  return node;
}

/** The editor/CI JSON Schema of a BackupSchedule in `apiVersion` (default v1alpha1). Deterministic. */
export function toEditorJsonSchema(apiVersion: ServedGroupVersion = GROUP_VERSION): SchemaNode {
  const { schema, celRules } = SOURCES[apiVersion];
  return editorJsonSchema({ schema, celRules, apiVersion, kind: KIND, what: 'its CronJob lives there too' }, (closed) => {
    // The names Go's time.LoadLocation knows, so editors complete them and CI catches `utc` or a typo.
    Object.assign(nodeAt(closed, ['spec', 'timeZone']), { enum: [...TIME_ZONE_NAMES, 'UTC'].filter((name, i, all) => all.indexOf(name) === i).sort() });
  });
}

/** The editor/CI JSON Schema of a Restore (`kubelings.dev/v1`). Deterministic. */
export function restoreEditorJsonSchema(): SchemaNode {
  return editorJsonSchema({ schema: restoreSchema, celRules: RESTORE_CEL_RULES, apiVersion: GROUP_VERSION_V1, kind: RESTORE_KIND, what: 'its Job runs there and the claims are there' });
}

/** What {@link editorJsonSchema} derives a kind's editor schema from. */
interface EditorSource {
  readonly schema: SchemaNode;
  readonly celRules: readonly CelRule[];
  readonly apiVersion: string;
  readonly kind: string;
  /** What the namespace means for the kind, for metadata.namespace's description. */
  readonly what: string;
}

/** A kind's editor JSON Schema; `refine` adds what only that kind has (on the closed copy). */
function editorJsonSchema({ schema, celRules, apiVersion, kind, what }: EditorSource, refine?: (closed: Record<string, unknown>) => void): SchemaNode {
  const closed = withoutKeywords(closeObjects(schema, true), DROPPED) as Record<string, unknown>;
  const translatedAt = new Map<string, SchemaNode[]>();
  for (const rule of celRules) {
    const translated = CEL_AS_JSON_SCHEMA[rule.rule];
    const key = rule.path.join('.');
    if (translated !== undefined) translatedAt.set(key, [...(translatedAt.get(key) ?? []), translated]);
  }
  // One rule merges into its node; several (v1's source: an if/then/else per union member) sit side by
  // side in allOf, where none overwrites another's keywords.
  for (const [key, translated] of translatedAt) Object.assign(nodeAt(closed, key.split('.')), translated.length === 1 ? translated[0] : { allOf: translated });
  refine?.(closed);
  const properties = closed['properties'] as Record<string, SchemaNode>;
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    ...closed,
    required: ['apiVersion', 'kind', 'metadata', 'spec'],
    properties: {
      ...properties,
      apiVersion: { ...properties['apiVersion'], enum: [apiVersion] },
      kind: { ...properties['kind'], enum: [kind] },
      metadata: {
        type: 'object',
        description: 'Standard object metadata.',
        required: ['name'],
        properties: {
          name: { type: 'string', maxLength: 253, pattern: DNS1123_SUBDOMAIN, description: `Name of the ${kind} (a DNS-1123 subdomain).` },
          namespace: { type: 'string', maxLength: 63, description: `Namespace of the ${kind}; ${what}.` },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          annotations: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
    },
  };
}
