/**
 * fast-check arbitraries of BackupSchedules, derived from the schema's shapes (types, required, enums,
 * bounds, patterns, list types), with overrides where a value must satisfy more than its node says
 * (cron grammar, time-zone names, requests within limits, CEL unions). The properties assert that what
 * they generate is valid, so a generator drifting from the schema fails loudly rather than testing less.
 */
import fc from 'fast-check';
import { backupScheduleSchema, backupScheduleV1Schema, GROUP_VERSION, GROUP_VERSION_V1, KIND, RETENTION_RULES, SOURCE_TYPES, type SchemaNode } from '../../src/api/index.ts';
import { DESTINATION_TYPES } from '../../src/api/schema-v1.ts';
import { RETENTION_ANNOTATION } from '../../src/conversion/index.ts';

type Json = Record<string, unknown>;
type Overrides = Readonly<Record<string, fc.Arbitrary<unknown>>>;

const dateTime = fc
  .date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-12-31T23:59:59Z'), noInvalidDate: true })
  .map((d) => d.toISOString().replace(/\.\d{3}Z$/, 'Z'));

/** An arbitrary of the values a schema node allows; `path` (dotted) picks an override when there is one. */
export function fromSchema(node: SchemaNode, overrides: Overrides, path = ''): fc.Arbitrary<unknown> {
  const override = overrides[path];
  if (override !== undefined) return override;
  if (Array.isArray(node['enum'])) return fc.constantFrom(...(node['enum'] as unknown[]));
  switch (node['type']) {
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const min = typeof node['minimum'] === 'number' ? node['minimum'] : 0;
      const max = typeof node['maximum'] === 'number' ? node['maximum'] : min + 1_000_000;
      return fc.integer({ min, max: Math.min(max, 2 ** 31 - 1) });
    }
    case 'string': {
      if (node['format'] === 'date-time') return dateTime;
      const maxLength = typeof node['maxLength'] === 'number' ? node['maxLength'] : 64;
      const minLength = typeof node['minLength'] === 'number' ? node['minLength'] : 0;
      const text = typeof node['pattern'] === 'string' ? fc.stringMatching(new RegExp(node['pattern'] as string)) : fc.string({ maxLength: Math.min(maxLength, 40) });
      return text.filter((s) => s.length >= minLength && s.length <= maxLength);
    }
    case 'array': {
      const items = fromSchema(node['items'] as SchemaNode, overrides, `${path}[]`);
      const constraints = { minLength: (node['minItems'] as number | undefined) ?? 0, maxLength: Math.min((node['maxItems'] as number | undefined) ?? 4, 4) };
      const keys = node['x-kubernetes-list-map-keys'] as string[] | undefined;
      if (keys !== undefined) return fc.uniqueArray(items, { ...constraints, selector: (item) => keys.map((k) => String((item as Json)[k])).join('/') });
      return node['x-kubernetes-list-type'] === 'set' ? fc.uniqueArray(items, constraints) : fc.array(items, constraints);
    }
    case 'object': {
      const properties = (node['properties'] as Record<string, SchemaNode> | undefined) ?? {};
      const model = Object.fromEntries(Object.entries(properties).map(([name, child]) => [name, fromSchema(child, overrides, path === '' ? name : `${path}.${name}`)]));
      return fc.record(model, { requiredKeys: (node['required'] as string[] | undefined) ?? [] });
    }
    default:
      throw new Error(`no arbitrary for the schema node at ${path || '(root)'}`);
  }
}

const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}[a-z0-9]$/);
/** Object metadata as the API server sends it: no empty maps, and never the annotation conversion reserves. */
const metadata = fc.record(
  {
    name,
    namespace: name,
    uid: fc.uuid(),
    resourceVersion: fc.integer({ min: 1 }).map(String),
    generation: fc.integer({ min: 1, max: 1000 }),
    labels: fc.dictionary(name, name, { minKeys: 1, maxKeys: 3 }),
    annotations: fc.dictionary(fc.constantFrom('example.com/owner', 'note', 'kubelings.dev/team'), fc.string({ maxLength: 20 }), { minKeys: 1, maxKeys: 3 }),
  },
  { requiredKeys: ['name', 'namespace', 'uid'] },
);

const endpoints = (https: boolean) => fc.uniqueArray(fc.tuple(name, fc.integer({ min: 1, max: 65535 })).map(([host, port]) => `${https ? 'https' : 'http'}://${host}:${port}`), { minLength: 1, maxLength: 3 });
const etcd = fc.oneof(
  fc.record({ endpoints: endpoints(true), tlsSecretName: name }),
  fc.record({ endpoints: endpoints(false) }),
);
const pvc = fc.record({ claimName: name.map((n) => `src-${n}`) });
const quantity = (unit: string) => fc.integer({ min: 1, max: 4 }).map((n) => `${n}${unit}`);

/** Objects the API server holds always have metadata (the schema leaves it optional for local files). */
const withMetadata = (schema: SchemaNode): SchemaNode => ({ ...schema, required: ['spec', 'metadata'] });

/** What the shapes alone cannot express, shared by both versions. */
const SHARED: Overrides = {
  metadata,
  'spec.schedule': fc.constantFrom('0 2 * * *', '@daily', '*/15 * * * *', '30 3 * * SUN', '@every 6h'),
  'spec.timeZone': fc.constantFrom('Europe/Berlin', 'UTC', 'America/New_York'),
  // Requests within limits: the validator's cross-field check.
  'spec.resources': fc.record({ requests: fc.record({ cpu: quantity('00m'), memory: quantity('00Mi') }), limits: fc.record({ memory: quantity('Gi') }) }, { requiredKeys: [] }),
  'spec.destination.persistentVolumeClaim.claimName': name.map((n) => `dst-${n}`),
  // The CEL rule of path: no ".." segment.
  'spec.destination.persistentVolumeClaim.path': fc.stringMatching(/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/).filter((p) => p.length <= 1024 && !p.split('/').includes('..')),
};

/** Generated v1alpha1 BackupSchedules that validateBackupSchedule accepts, retention defaulted. */
export const v1alpha1Schedule: fc.Arbitrary<Json> = fc
  .tuple(
    fromSchema(withMetadata(backupScheduleSchema), {
      ...SHARED,
      'spec.source': fc.oneof(etcd.map((e) => ({ etcd: e })), pvc.map((p) => ({ persistentVolumeClaim: p }))),
      // As the API server holds and sends it: defaulted (retention {} becomes keepLast 7 on decoding).
      'spec.retention': fc.record({ keepLast: fc.integer({ min: 1, max: 1000 }) }),
    }) as fc.Arbitrary<Json>,
  )
  .map(([o]) => ({ ...o, apiVersion: GROUP_VERSION, kind: KIND }));

const count = fc.integer({ min: 1, max: 1000 });
/** A v1 retention: any non-empty subset of the rules. */
const retentionV1 = fc
  .record(Object.fromEntries(RETENTION_RULES.map((r) => [r, count])), { requiredKeys: [] })
  .filter((r) => Object.keys(r).length > 0);

/** Valid age X25519 recipients (a pattern-generated string fails the bech32 checksum the validator checks). */
export const AGE_RECIPIENTS = [
  'age1u5n688lmq3kq8qqmhp5s2wwqe3c9xc9y8w8c3spyf4wgxt9vjprqqzqn6k',
  'age1z2weu7rdkmnsx4snq9xys62hmzmvqhjsdp48n39p4gzrh7aqee2s8q00em',
  'age1jdd8rlx225ua0m2d6ale2e0s5t775jmn09luc5z58n4p8q5t4d0srq573m',
] as const;

/** Overrides of the v1 object store: the CEL rules on bucket, prefix and an http:// endpoint. */
const OBJECT_STORE: Overrides = {
  'spec.destination.objectStore.bucket': fc.stringMatching(/^[a-z0-9][a-z0-9-]{1,20}(\.[a-z0-9][a-z0-9-]{0,10})?[a-z]$/),
  'spec.destination.objectStore.prefix': fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,10}(\/[A-Za-z0-9_-][A-Za-z0-9._-]{0,10}){0,3}$/),
  'spec.destination.objectStore.endpoint': fc.tuple(name, fc.integer({ min: 1, max: 65535 })).map(([host, port]) => `https://${host}:${port}`),
  'spec.encryption.ageRecipients[]': fc.constantFrom(...AGE_RECIPIENTS),
};

/** Generated v1 BackupSchedules that validateBackupScheduleV1 accepts. */
export const v1Schedule: fc.Arbitrary<Json> = (
  fromSchema(withMetadata(backupScheduleV1Schema), {
    ...SHARED,
    'spec.source': fc.oneof(etcd.map((e) => ({ type: SOURCE_TYPES.etcd, etcd: e })), pvc.map((p) => ({ type: SOURCE_TYPES.persistentVolumeClaim, persistentVolumeClaim: p }))),
    'spec.retention': retentionV1,
    ...OBJECT_STORE,
  }) as fc.Arbitrary<Json>
).map((o) => ({ ...o, apiVersion: GROUP_VERSION_V1, kind: KIND, spec: withOneDestination(o['spec'] as Json) }));

/**
 * The destination union made valid: the generator sets members independently, so keep the one `type`
 * names, or (type left out, as 0.2.0 stored it) the claim.
 */
function withOneDestination(spec: Json): Json {
  const destination = spec['destination'] as Json;
  const type = destination['type'] ?? DESTINATION_TYPES.persistentVolumeClaim;
  const member = Object.entries(DESTINATION_TYPES).find(([, t]) => t === type)![0];
  const kept = Object.fromEntries(Object.entries(destination).filter(([key]) => key === 'type' || key === member));
  if (kept[member] !== undefined) return { ...spec, destination: kept };
  // The generator left the named member out: fall back to the claim every 0.2.0 object has.
  return { ...spec, destination: { persistentVolumeClaim: { claimName: 'dst-fallback' } } };
}

/** Whether an object carries the annotation conversion reserves (generators never produce it). */
export const hasReservedAnnotation = (o: Json): boolean => ((o['metadata'] as Json | undefined)?.['annotations'] as Json | undefined)?.[RETENTION_ANNOTATION] !== undefined;
