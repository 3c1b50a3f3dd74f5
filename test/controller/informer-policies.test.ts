/**
 * The rule of issue 41 (HIGH 1), checked over every informer the operator assembles: whatever a tenant
 * puts into an object the controller watches, the cache keeps at most its policy's byte budget of it
 * (src/runtime/cache-policy.ts). The manager builds no informer without a policy; this test walks the
 * informers `addControllers` requests (all namespaces, and watched namespaces) and feeds each one's
 * transform what a tenant can write: 250 KiB annotations, 1,000 labels, managedFields, 5,000 owner
 * references, finalizers, and for the built-in kinds (no schema bounds them) a 250 KiB spec and an
 * inflated status; for the custom resources the largest spec their schema admits. Every result must fit
 * the budget without being a stub (a tenant's object never costs a GET per reconcile); an informer of a
 * built-in kind must be label-selected (what nobody labels costs nothing). A new informer of a resource
 * this test has no attack objects for fails it: add them.
 */
import { describe, expect, it } from 'vitest';
import { backupScheduleV1Schema } from '../../src/api/schema-v1.ts';
import { restoreSchema } from '../../src/api/restore-schema.ts';
import type { SchemaNode } from '../../src/api/schema.ts';
import { parseCommandLine } from '../../src/controller/cli-options.ts';
import { addControllers } from '../../src/controller/operator.ts';
import { KubeConfig } from '../../src/kube/kube-config.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { childLabels } from '../../src/pure/labels.ts';
import { childNameFor } from '../../src/pure/names.ts';
import { restoreLabels } from '../../src/pure/restore-job.ts';
import { budgetedTransform, isCacheStub } from '../../src/runtime/cache-policy.ts';
import { jsonLengthWithin } from '../../src/runtime/json-size.ts';
import { silentLogger } from '../../src/runtime/logger.ts';
import { Manager } from '../../src/runtime/manager.ts';

const KIB = 1024;
const blob = (seed: string, bytes = 250 * KIB): string => `${seed}:`.padEnd(bytes, 'x');
const long = (n: number): string => 'a'.repeat(n);

/** The largest instance of a schema node: every string at its maxLength, every list at maxItems. Throws on a node a tenant could make unbounded. */
function largest(node: SchemaNode, path: string): unknown {
  const n = node as Record<string, any>;
  if (n['enum']) return (n['enum'] as unknown[]).reduce((a, b) => (JSON.stringify(b).length > JSON.stringify(a).length ? b : a));
  switch (n['type']) {
    case 'string':
      // date-time and fixed-width patterns (a sha256) are bounded by their format; anything else needs maxLength.
      if (n['maxLength'] === undefined && n['format'] !== 'date-time' && !/^\^\[[^\]]+\]\{\d+\}\$$/.test(String(n['pattern']))) throw new Error(`${path}: a string without maxLength`);
      return 'x'.repeat(n['maxLength'] ?? 64);
    case 'integer':
    case 'number':
      return Number.MAX_SAFE_INTEGER;
    case 'boolean':
      return false;
    case 'array':
      if (n['maxItems'] === undefined) throw new Error(`${path}: a list without maxItems`);
      return Array.from({ length: n['maxItems'] }, () => largest(n['items'], `${path}[]`));
    default: {
      const obj: Record<string, unknown> = {};
      for (const [key, child] of Object.entries((n['properties'] ?? {}) as Record<string, SchemaNode>)) obj[key] = largest(child, `${path}.${key}`);
      if (n['additionalProperties'] && typeof n['additionalProperties'] === 'object') {
        if (n['maxProperties'] === undefined) throw new Error(`${path}: a map without maxProperties`);
        for (let i = 0; i < n['maxProperties']; i++) obj[`key-${i}`] = largest(n['additionalProperties'], `${path}{}`);
      }
      return obj;
    }
  }
}

const propertyOf = (schema: SchemaNode, name: string): SchemaNode => (schema as { properties: Record<string, SchemaNode> }).properties[name]!;

/** The status the controller writes, as large as it gets: every field at its maximum but conditions, which are its own two of 4 KiB messages. */
function largestOwnStatus(schema: SchemaNode): Record<string, unknown> {
  const status = largest(propertyOf(schema, 'status'), 'status') as { conditions: Record<string, unknown>[] };
  const condition = status.conditions[0]!;
  return { ...status, conditions: [{ ...condition, message: blob('m', 4 * KIB) }, { ...condition, message: blob('n', 4 * KIB) }] };
}

/** What any tenant can put into an object's metadata, on any kind. */
function tenantMetadata(name: string, controller?: Record<string, unknown>): Record<string, unknown> {
  const owners = Array.from({ length: 5_000 }, (_, i) => ({ apiVersion: 'example.com/v1', kind: 'Thing', name: `owner-${i}`, uid: `uid-${i}` }));
  return {
    name,
    namespace: 'tenant',
    uid: '0f0e0d0c-0b0a-4909-8807-060504030201',
    resourceVersion: '123456789',
    generation: 7,
    creationTimestamp: '2026-12-01T00:00:00Z',
    labels: Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`example.com/label-${i}`, long(63)])),
    annotations: { 'example.com/blob': blob(name) },
    finalizers: Array.from({ length: 1_000 }, (_, i) => `example.com/finalizer-${i}`),
    managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { blob: blob('managed', 100 * KIB) } }],
    ownerReferences: controller ? [...owners, { ...controller, controller: true, blockOwnerDeletion: true }] : owners,
  };
}

/** A pod template of `bytes` of spec, as a tenant may write it into a CronJob or Job. */
const bigPodTemplate = (seed: string) => ({ spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36', env: [{ name: 'PAD', value: blob(seed) }] }] } });

const scheduleRef = { apiVersion: 'kubelings.dev/v1', kind: 'BackupSchedule', name: 'nightly', uid: 'uid-nightly' };

/** What a tenant can make an object of each watched resource look like (the status of built-in kinds too: someone may). */
const ATTACKS: Readonly<Record<string, () => KubeObject[]>> = {
  backupschedules: () => [
    { apiVersion: 'kubelings.dev/v1', kind: 'BackupSchedule', metadata: tenantMetadata('nightly'), spec: largest(propertyOf(backupScheduleV1Schema, 'spec'), 'spec'), status: largestOwnStatus(backupScheduleV1Schema) } as KubeObject,
  ],
  restores: () => [
    { apiVersion: 'kubelings.dev/v1', kind: 'Restore', metadata: tenantMetadata('db'), spec: largest(propertyOf(restoreSchema, 'spec'), 'spec'), status: largestOwnStatus(restoreSchema) } as KubeObject,
  ],
  cronjobs: () => {
    const status = { active: Array.from({ length: 10_000 }, (_, i) => ({ apiVersion: 'batch/v1', kind: 'Job', name: `j-${i}`, uid: `u-${i}` })), lastScheduleTime: blob('t', 10 * KIB), lastSuccessfulTime: '2026-12-01T00:00:00Z' };
    const cronJob = (name: string, controller: Record<string, unknown>): KubeObject => ({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { ...tenantMetadata(name, controller), labels: { ...(tenantMetadata(name).labels as object), ...childLabels('nightly') } },
      spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template: bigPodTemplate(name) } } },
      status,
    });
    // The schedule's child by name and owner (the one a cache keeps the spec of, within its budget), a copy, an absurd owner.
    return [cronJob(childNameFor('nightly'), scheduleRef), cronJob('copy', scheduleRef), cronJob('odd', { apiVersion: long(400), kind: long(400), name: long(400), uid: long(400) })];
  },
  jobs: () => {
    const conditions = Array.from({ length: 1_000 }, (_, i) => ({ type: i % 2 ? 'Complete' : 'Failed', status: 'True', reason: long(300), message: blob(`c${i}`, 10 * KIB), lastTransitionTime: long(300) }));
    const job = (name: string, labels: Record<string, string>, controller: Record<string, unknown>): KubeObject => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { ...tenantMetadata(name, controller), labels: { ...(tenantMetadata(name).labels as object), ...labels } },
      spec: { template: bigPodTemplate(name) },
      status: { startTime: long(300), completionTime: long(300), active: 1, conditions },
    });
    return [
      job('nightly-29000000', childLabels('nightly'), { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'uid-cronjob' }),
      job('restore-db', restoreLabels('db'), { apiVersion: 'kubelings.dev/v1', kind: 'Restore', name: 'db', uid: 'uid-db' }),
      job('odd', childLabels('nightly'), { apiVersion: long(400), kind: long(400), name: long(400), uid: long(400) }),
    ];
  },
};

/** The informers `addControllers` asks a manager for, with the flags `args`. */
function assembled(args: readonly string[]) {
  const command = parseCommandLine(args);
  if (command.kind !== 'run') throw new Error('not a run command');
  const config = KubeConfig.fromKubeconfig('apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n');
  const manager = new Manager({ config, userAgent: 'test', identity: 'test', pageSize: 20, syncPeriodMs: 0, logger: silentLogger });
  addControllers(manager, command.options, { events: { event: () => undefined }, serverVersionChecked: Promise.resolve(), serverVersion: () => undefined });
  const specs = manager.informerSpecs;
  manager.client.close();
  return specs;
}

describe.each([
  ['all namespaces', []],
  ['watched namespaces', ['--namespace=team-a', '--namespace=team-b']],
])('every informer the operator assembles (%s)', (_name, args) => {
  const specs = assembled(args);

  it('is one of the resources this test attacks, and there are informers of each controller', () => {
    expect(specs.length).toBeGreaterThan(0);
    expect(new Set(specs.map(({ spec }) => spec.resource.plural))).toEqual(new Set(['backupschedules', 'cronjobs', 'jobs', 'restores']));
    for (const { informer, spec } of specs) expect(ATTACKS[spec.resource.plural], `no attack objects for informer ${informer.name}: add them to this test`).toBeDefined();
  });

  it.each(specs.map(({ informer, spec }) => [informer.name, spec] as const))('%s keeps what a tenant writes within its budget, never as a stub', (_informer, spec) => {
    const keep = budgetedTransform(spec.cache);
    for (const attack of ATTACKS[spec.resource.plural]!()) {
      const kept = spec.cache.transform(structuredClone(attack));
      const size = jsonLengthWithin(kept, spec.cache.maxObjectBytes);
      expect(size, `${attack.metadata.name}: ${JSON.stringify(kept).length} characters kept, budget ${spec.cache.maxObjectBytes}`).toBeLessThanOrEqual(spec.cache.maxObjectBytes);
      expect(isCacheStub(keep(structuredClone(attack)))).toBe(false);
      expect(JSON.stringify(kept)).not.toContain('example.com/blob');
    }
  });

  // Built-in groups have no dot (core '', batch, apps); custom resources' groups are domain names.
  it.each(specs.filter(({ spec }) => !spec.resource.group.includes('.')).map(({ informer, spec }) => [informer.name, spec] as const))(
    '%s, of a built-in kind, lists and watches only what carries the operator\'s label',
    (_informer, spec) => {
      expect(spec.labelSelector).toBe('app.kubernetes.io/managed-by=backupschedule-operator');
    },
  );
});
