import { readdirSync, readFileSync } from 'node:fs';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Lease } from 'kubernetes-models/coordination.k8s.io/v1/Lease';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { describe, expect, it } from 'vitest';
import { API_VERSION_V1, GROUP_VERSION_V1, validateBackupScheduleV1 } from '../../src/api/index.ts';
import { SYNC_WAVE_ANNOTATION } from '../../src/manifests/index.ts';
import { API_GROUP, CRD_NAME, PLURAL } from '../../src/api/constants.ts';
import { storageMigrationRules } from '../../src/migration/index.ts';
import { crdValidator, DIST_DIR, DIST_EXAMPLES_DIR, readKustomization, readManifests, type Manifest } from './dist-files.ts';

/** kubernetes-models classes by kind: their validate() checks the official OpenAPI schema. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  CustomResourceDefinition,
  Deployment,
  Lease,
  NetworkPolicy,
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
  Namespace,
  Secret,
  Service,
  ServiceAccount,
};

const operator = [...readManifests().entries()];
const examples = [...readManifests(DIST_EXAMPLES_DIR).entries()];
const manifests = [...operator, ...examples];

/** `NN-<kind>-<name>.yaml`: NN is the position in the folder. */
const fileName = (m: Manifest, index: number): string => `${String(index).padStart(2, '0')}-${m.kind.toLowerCase()}-${m.metadata.name}.yaml`;

describe('dist/', () => {
  it('holds one file per object named NN-<kind>-<name>.yaml in apply order: Namespace, CRD, ServiceAccount, RBAC, Lease, Secret, Service, Deployment, NetworkPolicy', () => {
    expect(operator.map(([, m]) => m.kind)).toEqual([
      'Namespace',
      'CustomResourceDefinition',
      'CustomResourceDefinition',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRole',
      'ClusterRole',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'Role',
      'RoleBinding',
      'RoleBinding',
      'Lease',
      'Secret',
      'Service',
      'Deployment',
      'NetworkPolicy',
    ]);
    operator.forEach(([file, m], i) => expect(file).toBe(fileName(m, i)));
  });

  it('keeps the example (its Namespace, then the BackupSchedule) in dist/examples/, out of `kubectl create -f dist/`', () => {
    expect(examples.map(([file]) => file)).toEqual(['00-namespace-kubelings.yaml', '01-backupschedule-nightly-etcd.yaml']);
    examples.forEach(([file, m], i) => expect(file).toBe(fileName(m, i)));
    expect(operator.some(([, m]) => m.kind === 'BackupSchedule')).toBe(false);
  });

  it.each(manifests.filter(([, m]) => m.kind !== 'BackupSchedule'))('%s is valid against the Kubernetes OpenAPI schema', (_file, m) => {
    const Model = MODELS[m.kind];
    expect(Model, `no kubernetes-models class for ${m.kind}`).toBeDefined();
    expect(() => new Model!(m as never).validate()).not.toThrow();
  });

  it('holds an example BackupSchedule in v1, valid for the CRD\'s v1 schema and validateBackupScheduleV1, with GFS retention and source.type', () => {
    const schedules = examples.filter(([, m]) => m.kind === 'BackupSchedule').map(([, m]) => m);
    expect(schedules.map((m) => `${m.apiVersion} ${m.metadata.namespace}/${m.metadata.name}`)).toEqual([`${GROUP_VERSION_V1} kubelings/nightly-etcd`]);
    const validate = crdValidator(DIST_DIR, API_VERSION_V1);
    for (const m of schedules) {
      expect(validate(m), JSON.stringify(validate.errors)).toBe(true);
      expect(validateBackupScheduleV1(m)).toEqual([]);
      expect(m['spec']).toMatchObject({ source: { type: 'Etcd' }, retention: { keepDaily: 7, keepWeekly: 4, keepMonthly: 6 } });
    }
  });

  it.each([
    ['dist/', DIST_DIR, operator],
    ['dist/examples/', DIST_EXAMPLES_DIR, examples],
  ] as const)('lists every file of %s in its Kustomization, in file order, and nothing with a .yaml/.yml/.json name that kubectl -f would read', (_name, dir, files) => {
    expect(readKustomization(dir)).toEqual(files.map(([f]) => f));
    expect(readdirSync(dir).filter((f) => /\.(ya?ml|json)$/.test(f) && !files.some(([m]) => m === f))).toEqual([]);
  });

  it('orders objects with Argo CD sync waves: namespaces, CRD, RBAC and Lease, controller, example', () => {
    const wave = (m: Manifest) => Number(m.metadata.annotations?.[SYNC_WAVE_ANNOTATION]);
    const waves = Object.fromEntries(manifests.map(([, m]) => [m.kind, wave(m)]));
    expect(waves).toEqual({
      Namespace: -2,
      CustomResourceDefinition: -1,
      ClusterRole: 0,
      ClusterRoleBinding: 0,
      Role: 0,
      RoleBinding: 0,
      ServiceAccount: 0,
      Lease: 0,
      Secret: 0,
      Service: 1,
      Deployment: 1,
      NetworkPolicy: 1,
      BackupSchedule: 2,
    });
    const operatorWaves = operator.map(([, m]) => wave(m));
    expect(operatorWaves, 'file order follows the sync waves').toEqual([...operatorWaves].sort((a, b) => a - b));
  });

  it("ships migrate-storage's ClusterRole bound to nobody, with exactly the migration's rules", () => {
    const role = operator.map(([, m]) => m).find((m) => m.kind === 'ClusterRole' && m.metadata.name === 'backupschedule-storage-migrator');
    expect(role?.['rules']).toEqual(storageMigrationRules({ crdName: CRD_NAME, group: API_GROUP, plural: PLURAL }));
    const bindings = operator.map(([, m]) => m).filter((m) => m.kind.endsWith('Binding'));
    expect(bindings.filter((b) => (b['roleRef'] as { name: string }).name === 'backupschedule-storage-migrator')).toEqual([]);
  });

  it('carries no cdk8s hash suffixes or construct-address labels', () => {
    for (const [file, m] of manifests) {
      expect(JSON.stringify(m), file).not.toContain('cdk8s.io/metadata.addr');
      expect(m.metadata.name, file).not.toMatch(/-c8[0-9a-f]{6}$/);
    }
  });
});

describe('the CRD in dist/', () => {
  const crdText = readFileSync(`${DIST_DIR}01-customresourcedefinition-backupschedules.kubelings.dev.yaml`, 'utf8');

  it('holds the full schema in the YAML: CEL rules, list types, defaults, printer columns', () => {
    // v1alpha1's 4 rules and v1's 9: spec, source, etcd, the destination union, objectStore (http opt-in),
    // its bucket and prefix, the claim's path, retention (one node may hold several rules).
    expect(crdText.match(/x-kubernetes-validations:/g)?.length).toBe(4 + 9);
    expect(crdText).toContain('x-kubernetes-list-map-keys:');
    expect(crdText).toContain('default: Forbid');
    expect(crdText).toContain('jsonPath: .status.conditions[?(@.type=="Ready")].status');
    expect(crdText).not.toMatch(/xKubernetes|tsType|title:/);
  });

  it('describes every property except the root metadata', () => {
    const walk = (node: Record<string, any>, path: string): string[] => {
      const missing = typeof node['description'] === 'string' || path === '.metadata' || path === '' ? [] : [path];
      const children = Object.entries((node['properties'] as Record<string, any> | undefined) ?? {}).flatMap(([k, v]) => walk(v, `${path}.${k}`));
      const items = node['items'] === undefined ? [] : walk(node['items'], `${path}[]`);
      return [...missing, ...children, ...items];
    };
    const crd = [...readManifests().values()].find((m) => m.kind === 'CustomResourceDefinition') as Record<string, any>;
    expect(walk(crd['spec'].versions[0].schema.openAPIV3Schema, '')).toEqual([]);
  });
});
