import { readFileSync } from 'node:fs';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Lease } from 'kubernetes-models/coordination.k8s.io/v1/Lease';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateBackupSchedule } from '../../src/api/index.ts';
import { SYNC_WAVE_ANNOTATION } from '../../src/manifests/index.ts';
import { crdValidator, DIST_DIR, readManifests, type Manifest } from './dist-files.ts';

/** kubernetes-models classes by kind: their validate() checks the official OpenAPI schema. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  CustomResourceDefinition,
  Deployment,
  Lease,
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
  Namespace,
  ServiceAccount,
};

const manifests = [...readManifests().entries()];

describe('dist/', () => {
  it('holds one file per object, named <Kind>.<name>.yaml', () => {
    expect(manifests.length).toBe(11);
    for (const [file, m] of manifests) expect(file).toBe(`${m.kind}.${m.metadata.name}.yaml`);
  });

  it.each(manifests.filter(([, m]) => m.kind !== 'BackupSchedule'))('%s is valid against the Kubernetes OpenAPI schema', (_file, m) => {
    const Model = MODELS[m.kind];
    expect(Model, `no kubernetes-models class for ${m.kind}`).toBeDefined();
    expect(() => new Model!(m as never).validate()).not.toThrow();
  });

  it('holds an example BackupSchedule valid for the CRD schema and validateBackupSchedule', () => {
    const examples = manifests.filter(([, m]) => m.kind === 'BackupSchedule').map(([, m]) => m);
    expect(examples.map((m) => `${m.metadata.namespace}/${m.metadata.name}`)).toEqual(['kubelings/nightly-etcd']);
    const validate = crdValidator();
    for (const m of examples) {
      expect(validate(m), JSON.stringify(validate.errors)).toBe(true);
      expect(validateBackupSchedule(m)).toEqual([]);
    }
  });

  it('lists every file in kustomization.yaml, the CRD before the example', () => {
    const kustomization = parse(readFileSync(`${DIST_DIR}kustomization.yaml`, 'utf8')) as { resources: string[] };
    expect([...kustomization.resources].sort()).toEqual(manifests.map(([f]) => f).sort());
    const crd = kustomization.resources.findIndex((f) => f.startsWith('CustomResourceDefinition.'));
    const example = kustomization.resources.findIndex((f) => f.startsWith('BackupSchedule.'));
    expect(crd).toBeLessThan(example);
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
      Deployment: 1,
      BackupSchedule: 2,
    });
  });

  it('carries no cdk8s hash suffixes or construct-address labels', () => {
    for (const [file, m] of manifests) {
      expect(JSON.stringify(m), file).not.toContain('cdk8s.io/metadata.addr');
      expect(m.metadata.name, file).not.toMatch(/-c8[0-9a-f]{6}$/);
    }
  });
});

describe('the CRD in dist/', () => {
  const crdText = readFileSync(`${DIST_DIR}CustomResourceDefinition.backupschedules.kubelings.dev.yaml`, 'utf8');

  it('holds the full schema in the YAML: CEL rules, list types, defaults, printer columns', () => {
    expect(crdText.match(/x-kubernetes-validations:/g)?.length).toBe(4);
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
