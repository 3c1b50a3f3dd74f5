import { Testing } from 'cdk8s';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import { describe, expect, it } from 'vitest';
import { backupScheduleSchema, backupScheduleV1Schema, toCrdOpenApiSchema } from '../../src/api/index.ts';
import { BackupScheduleCrd } from '../../src/manifests/index.ts';

function synthCrd(): Record<string, any> {
  const chart = Testing.chart();
  new BackupScheduleCrd(chart, 'Crd', { webhookService: { namespace: 'ops', name: 'hook' } });
  const [crd] = Testing.synth(chart);
  return crd as Record<string, any>;
}

describe('BackupScheduleCrd', () => {
  const crd = synthCrd();
  const version = crd['spec'].versions[0];
  const schema = version.schema.openAPIV3Schema;
  const v1 = crd['spec'].versions[1];

  it('matches the snapshot', () => {
    expect(crd).toMatchSnapshot();
  });

  it('is a valid CustomResourceDefinition for the Kubernetes OpenAPI schema', () => {
    expect(() => new CustomResourceDefinition(crd as never).validate()).not.toThrow();
  });

  it('keeps every keyword of the source schema, x-kubernetes-* included (cdk8s-plus drops raw ones)', () => {
    expect(schema).toEqual(toCrdOpenApiSchema(backupScheduleSchema));
    expect(v1.schema.openAPIV3Schema).toEqual(toCrdOpenApiSchema(backupScheduleV1Schema));
  });

  it('serves v1alpha1 and v1, stores v1, and converts through the webhook Service (no caBundle: it is injected)', () => {
    expect(crd['spec'].versions.map((v: { name: string; served: boolean; storage: boolean }) => [v.name, v.served, v.storage])).toEqual([
      ['v1alpha1', true, false],
      ['v1', true, true],
    ]);
    expect(v1).toMatchObject({ subresources: { status: {} }, additionalPrinterColumns: version.additionalPrinterColumns });
    expect(crd['spec'].conversion).toEqual({
      strategy: 'Webhook',
      webhook: { clientConfig: { service: { namespace: 'ops', name: 'hook', path: '/convert', port: 443 } }, conversionReviewVersions: ['v1'] },
    });
  });

  it('contains the CEL rules, list types, defaults and descriptions in the synthesized YAML', () => {
    const text = JSON.stringify(schema);
    expect(text.match(/"x-kubernetes-validations"/g)?.length).toBe(4);
    expect(schema.properties.spec.properties.source['x-kubernetes-validations'][0].rule).toContain('has(self.etcd)');
    expect(schema.properties.status.properties.conditions['x-kubernetes-list-type']).toBe('map');
    expect(schema.properties.spec.properties.retention.default).toEqual({});
    expect(schema.properties.spec.properties.retention.properties.keepLast).toMatchObject({ default: 7, minimum: 1, maximum: 1000 });
    expect(schema.properties.spec.properties.concurrencyPolicy.default).toBe('Forbid');
    expect(text).not.toMatch(/xKubernetes|tsType|"title"/);
  });

  it('is namespaced with the status subresource, short name bks and category backup', () => {
    expect(crd['metadata'].name).toBe('backupschedules.kubelings.dev');
    expect(crd['spec'].scope).toBe('Namespaced');
    expect(crd['spec'].names).toMatchObject({ kind: 'BackupSchedule', plural: 'backupschedules', shortNames: ['bks'], categories: ['backup'] });
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: false, subresources: { status: {} } });
  });

  it('prints Schedule, Suspended, Last Schedule, Ready, Last Success, Last Result and Age columns, and Time Zone, CronJob and Message only with -o wide', () => {
    expect(version.additionalPrinterColumns.map((c: { name: string; jsonPath: string; priority?: number }) => [c.name, c.jsonPath, c.priority ?? 0])).toEqual([
      ['Schedule', '.spec.schedule', 0],
      ['Suspended', '.spec.suspend', 0],
      ['Last Schedule', '.status.lastScheduleTime', 0],
      ['Ready', '.status.conditions[?(@.type=="Ready")].status', 0],
      ['Last Success', '.status.lastSuccessfulTime', 0],
      ['Last Result', '.status.recentRuns[0].result', 0],
      ['Age', '.metadata.creationTimestamp', 0],
      ['Time Zone', '.spec.timeZone', 1],
      ['CronJob', '.status.cronJobName', 1],
      ['Message', '.status.conditions[?(@.type=="Ready")].message', 1],
    ]);
  });
});
