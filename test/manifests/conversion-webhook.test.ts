import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { CRD_NAME } from '../../src/api/constants.ts';
import { parseCommandLine } from '../../src/controller/cli-options.ts';
import { webhookDnsNames } from '../../src/controller/conversion-webhook-server.ts';
import { CLUSTER_RULES, ConversionWebhook, OperatorChart, SERVES_CONVERSION_LABEL, synthesize, WEBHOOK_PORT } from '../../src/manifests/index.ts';

type Obj = Record<string, any>;

describe('ConversionWebhook', () => {
  it('is an empty Opaque Secret and a ClusterIP Service from 443 to the Pods\' webhook port', () => {
    const chart = new Chart(Testing.app(), 'test');
    new ConversionWebhook(chart, 'hook', { namespace: 'ops', serviceName: 'hook', secretName: 'hook-tls', selector: { app: 'op' }, labels: { team: 'x' } });
    const objects = Testing.synth(chart) as Obj[];
    expect(objects).toMatchSnapshot();
    const [secret, service] = objects;
    expect(secret).toMatchObject({ kind: 'Secret', type: 'Opaque', metadata: { name: 'hook-tls', namespace: 'ops', labels: { team: 'x' } } });
    // No data: the controller owns every key, and a GitOps tool applying this never removes them.
    expect(secret?.['data']).toBeUndefined();
    expect(service?.['spec']).toEqual({ type: 'ClusterIP', selector: { app: 'op' }, ports: [{ name: 'webhook', port: 443, targetPort: 'webhook', protocol: 'TCP' }] });
  });
});

describe('OperatorChart: the conversion webhook', () => {
  const synth = (props: ConstructorParameters<typeof OperatorChart>[2]): Obj[] => Testing.synth(new OperatorChart(Testing.app(), 'test', props)) as Obj[];

  it('matches the snapshot', () => {
    expect(synth({})).toMatchSnapshot();
  });

  it('ships the Service, the Secret, a Role for that one Secret, the rule for that one CRD, and the flags', () => {
    const on = synth({ namespace: 'ops' });
    const names = on.map((o) => `${o['kind']}/${o['metadata'].name}`);
    expect(names).toEqual(expect.arrayContaining([
      'Role/backupschedule-operator-webhook-certificate',
      'RoleBinding/backupschedule-operator-webhook-certificate',
      'Secret/backupschedule-operator-webhook-tls',
      'Service/backupschedule-operator-webhook',
    ]));
    const find = (objects: Obj[], kind: string, name: string) => objects.find((o) => o['kind'] === kind && o['metadata'].name === name) as Obj;
    const clusterRole = (objects: Obj[]) => find(objects, 'ClusterRole', 'backupschedule-operator')['rules'];
    expect(clusterRole(on)).toEqual([...CLUSTER_RULES, { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: [CRD_NAME], verbs: ['get', 'patch'] }]);
    expect(find(on, 'Role', 'backupschedule-operator-webhook-certificate')['rules']).toEqual([{ apiGroups: [''], resources: ['secrets'], resourceNames: ['backupschedule-operator-webhook-tls'], verbs: ['get', 'update'] }]);
    expect(find(on, 'RoleBinding', 'backupschedule-operator-webhook-certificate')).toMatchObject({
      metadata: { namespace: 'ops' },
      roleRef: { kind: 'Role', name: 'backupschedule-operator-webhook-certificate' },
      subjects: [{ kind: 'ServiceAccount', name: 'backupschedule-operator', namespace: 'ops' }],
    });
    const deployment = find(on, 'Deployment', 'backupschedule-operator');
    const container = deployment['spec'].template.spec.containers[0];
    expect(container.ports).toContainEqual({ name: 'webhook', containerPort: WEBHOOK_PORT, protocol: 'TCP' });
    // Readiness (the Service's endpoints) means a certificate to serve, not synced caches: those need
    // conversions until the storage is migrated, and conversions need a ready Pod.
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz/conversion-webhook-certificate', port: 'health' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    // The Service selects the controller's Pods that serve the webhook: not those of a release without it.
    const serviceSelector = find(on, 'Service', 'backupschedule-operator-webhook')['spec'].selector;
    expect(serviceSelector).toEqual({ ...deployment['spec'].selector.matchLabels, [SERVES_CONVERSION_LABEL]: 'true' });
    expect(deployment['spec'].template.metadata.labels).toMatchObject(serviceSelector);
    expect(deployment['spec'].selector.matchLabels).not.toHaveProperty(SERVES_CONVERSION_LABEL);
    // The flags parse, and the certificate names the Service as kube-apiserver dials it.
    const parsed = parseCommandLine(container.args);
    if (parsed.kind !== 'run') throw new Error('expected run');
    expect(parsed.options.conversionWebhookAddress).toEqual({ host: '0.0.0.0', port: WEBHOOK_PORT });
    expect(webhookDnsNames(parsed.options.conversionWebhookServiceName, parsed.options.leaseNamespace ?? '')).toEqual(['backupschedule-operator-webhook.ops.svc', 'backupschedule-operator-webhook.ops.svc.cluster.local']);
    expect(parsed.options.conversionWebhookSecretName).toBe('backupschedule-operator-webhook-tls');
    // The CRD converts through that Service in the chart's namespace.
    expect(find(on, 'CustomResourceDefinition', CRD_NAME)['spec'].conversion.webhook.clientConfig.service).toEqual({ namespace: 'ops', name: 'backupschedule-operator-webhook', path: '/convert', port: 443 });
  });

  it('puts the Secret after the Lease and the Service before the Deployment in dist/ order', () => {
    const dir = mkdtempSync(join(tmpdir(), 'synth-webhook-'));
    try {
      synthesize(dir, { includeExample: false });
      const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
      expect(files.slice(-5)).toEqual([
        '13-lease-backupschedule-operator-leader.yaml',
        '14-secret-backupschedule-operator-webhook-tls.yaml',
        '15-service-backupschedule-operator-webhook.yaml',
        '16-deployment-backupschedule-operator.yaml',
        '17-networkpolicy-backupschedule-operator.yaml',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
