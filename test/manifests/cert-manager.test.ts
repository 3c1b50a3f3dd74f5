import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Chart, Testing } from 'cdk8s';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { CRD_NAME } from '../../src/api/constants.ts';
import { parseCommandLine } from '../../src/controller/cli-options.ts';
import { goParseDurationError } from '../../src/api/go-duration.ts';
import {
  CertManagerWebhookCertificates,
  CLUSTER_RULES,
  ConversionWebhook,
  INJECT_CA_FROM_ANNOTATION,
  OperatorChart,
  SYNC_WAVE_ANNOTATION,
  synthesize,
  WEBHOOK_CERT_DIR,
  WEBHOOK_SECRET_NAME,
  type OperatorChartProps,
} from '../../src/manifests/index.ts';

type Obj = Record<string, any>;

const synthChart = (props: OperatorChartProps): Obj[] => Testing.synth(new OperatorChart(Testing.app(), 'test', props)) as Obj[];
const find = (objects: Obj[], kind: string, name?: string): Obj => {
  const found = objects.find((o) => o['kind'] === kind && (name === undefined || o['metadata'].name === name));
  if (!found) throw new Error(`no ${kind}${name ? `/${name}` : ''}`);
  return found;
};
const ids = (objects: Obj[]): string[] => objects.map((o) => `${o['kind']}/${o['metadata'].name}`).sort();

describe('CertManagerWebhookCertificates', () => {
  const chart = new Chart(Testing.app(), 'test');
  new CertManagerWebhookCertificates(chart, 'certs', { namespace: 'ops', namePrefix: 'op', dnsNames: ['hook.ops.svc', 'hook.ops.svc.cluster.local'], secretName: 'hook-tls', labels: { team: 'x' } });
  const objects = Testing.synth(chart) as Obj[];

  it('matches the snapshot', () => {
    expect(objects).toMatchSnapshot();
  });

  it('chains a self-signed Issuer, a CA Certificate in its own Secret, a CA Issuer on that Secret, and the serving Certificate it signs', () => {
    expect(objects.map((o) => `${o['apiVersion']} ${o['kind']}/${o['metadata'].name}`)).toEqual([
      'cert-manager.io/v1 Issuer/op-selfsigned',
      'cert-manager.io/v1 Certificate/op-webhook-ca',
      'cert-manager.io/v1 Issuer/op-webhook-ca',
      'cert-manager.io/v1 Certificate/op-webhook-serving',
    ]);
    const [selfSigned, ca, caIssuer, serving] = objects as [Obj, Obj, Obj, Obj];
    expect(selfSigned['spec']).toEqual({ selfSigned: {} });
    expect(ca['spec']).toMatchObject({ isCA: true, secretName: 'op-webhook-ca', issuerRef: { group: 'cert-manager.io', kind: 'Issuer', name: 'op-selfsigned' } });
    expect(caIssuer['spec']).toEqual({ ca: { secretName: ca['spec'].secretName } });
    expect(serving['spec']).toMatchObject({
      secretName: 'hook-tls',
      issuerRef: { group: 'cert-manager.io', kind: 'Issuer', name: 'op-webhook-ca' },
      dnsNames: ['hook.ops.svc', 'hook.ops.svc.cluster.local'],
      usages: ['digital signature', 'key encipherment', 'server auth'],
    });
    expect(serving['spec'].isCA).toBeUndefined();
    expect(serving['spec'].secretName).not.toBe(ca['spec'].secretName);
    for (const o of objects) {
      expect(o['metadata']).toEqual({ name: o['metadata'].name, namespace: 'ops', labels: { team: 'x' }, annotations: { [SYNC_WAVE_ANNOTATION]: '0' } });
      expect(o['spec'].privateKey ?? { rotationPolicy: 'Always' }).toMatchObject({ rotationPolicy: 'Always' });
    }
  });

  it('renews each certificate well before it expires: the serving one after 60 of 90 days, the CA after 9 of 10 years', () => {
    // Go durations, as cert-manager parses them; whole hours here.
    const hours = (o: Obj, field: string): number => {
      const text: string = o['spec'][field];
      expect(goParseDurationError(text)).toBeUndefined();
      return Number(/^(\d+)h$/.exec(text)?.[1]);
    };
    const ca = find(objects, 'Certificate', 'op-webhook-ca');
    const serving = find(objects, 'Certificate', 'op-webhook-serving');
    expect([hours(serving, 'duration'), hours(serving, 'renewBefore')]).toEqual([90 * 24, 30 * 24]);
    expect([hours(ca, 'duration'), hours(ca, 'renewBefore')]).toEqual([3650 * 24, 365 * 24]);
  });

  it('takes another lifetime for the serving certificate', () => {
    const other = new Chart(Testing.app(), 'other');
    new CertManagerWebhookCertificates(other, 'certs', { namespace: 'ops', namePrefix: 'op', dnsNames: ['a'], secretName: 's', duration: '720h', renewBefore: '240h' });
    expect(find(Testing.synth(other) as Obj[], 'Certificate', 'op-webhook-serving')['spec']).toMatchObject({ duration: '720h', renewBefore: '240h' });
  });
});

describe("OperatorChart with certificates: 'cert-manager'", () => {
  const byController = synthChart({ namespace: 'ops' });
  const byCertManager = synthChart({ namespace: 'ops', certificates: 'cert-manager' });

  it('matches the snapshot', () => {
    expect(byCertManager).toMatchSnapshot();
  });

  it("differs from the default only by cert-manager's Issuers and Certificates instead of the Secret and its Role", () => {
    const before = ids(byController);
    const after = ids(byCertManager);
    expect(before.filter((id) => !after.includes(id))).toEqual([
      'Role/backupschedule-operator-webhook-certificate',
      'RoleBinding/backupschedule-operator-webhook-certificate',
      `Secret/${WEBHOOK_SECRET_NAME}`,
    ]);
    expect(after.filter((id) => !before.includes(id))).toEqual([
      'Certificate/backupschedule-operator-webhook-ca',
      'Certificate/backupschedule-operator-webhook-serving',
      'Issuer/backupschedule-operator-selfsigned',
      'Issuer/backupschedule-operator-webhook-ca',
    ]);
    expect(byCertManager.every((o) => o['metadata'].labels?.['app.kubernetes.io/part-of'] === 'backupschedule-operator')).toBe(true);
  });

  it('annotates the CRD for cainjector with the serving Certificate, which writes the Secret the Deployment mounts', () => {
    const crd = find(byCertManager, 'CustomResourceDefinition', CRD_NAME);
    expect(crd['metadata'].annotations).toEqual({ [SYNC_WAVE_ANNOTATION]: '-1', [INJECT_CA_FROM_ANNOTATION]: 'ops/backupschedule-operator-webhook-serving' });
    expect(crd['spec'].conversion.webhook.clientConfig).toEqual({ service: { namespace: 'ops', name: 'backupschedule-operator-webhook', path: '/convert', port: 443 } });
    const [namespace, name] = crd['metadata'].annotations[INJECT_CA_FROM_ANNOTATION].split('/');
    const serving = find(byCertManager, 'Certificate', name);
    expect(serving['metadata'].namespace).toBe(namespace);
    expect(serving['spec'].dnsNames).toEqual(['backupschedule-operator-webhook.ops.svc', 'backupschedule-operator-webhook.ops.svc.cluster.local']);
    const pod = find(byCertManager, 'Deployment')['spec'].template.spec;
    expect(pod.volumes).toContainEqual({ name: 'conversion-webhook-tls', secret: { secretName: serving['spec'].secretName, defaultMode: 0o644 } });
    expect(pod.containers[0].volumeMounts).toContainEqual({ name: 'conversion-webhook-tls', mountPath: WEBHOOK_CERT_DIR, readOnly: true });
    // The default variant: no annotation, nothing mounted.
    expect(find(byController, 'CustomResourceDefinition')['metadata'].annotations).toEqual({ [SYNC_WAVE_ANNOTATION]: '-1' });
    expect(find(byController, 'Deployment')['spec'].template.spec.volumes).toEqual([{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }]);
  });

  it('passes --conversion-webhook-cert-dir instead of the Secret and Service names, and the flags parse', () => {
    const deployment = find(byCertManager, 'Deployment');
    expect(() => new Deployment(deployment as never).validate()).not.toThrow();
    const args: string[] = deployment['spec'].template.spec.containers[0].args;
    expect(args.filter((a) => a.startsWith('--conversion-webhook-'))).toEqual(['--conversion-webhook-bind-address=:9443', `--conversion-webhook-cert-dir=${WEBHOOK_CERT_DIR}`]);
    const parsed = parseCommandLine(args);
    expect(parsed).toMatchObject({ kind: 'run', options: { conversionWebhookAddress: { port: 9443 }, conversionWebhookCertDir: WEBHOOK_CERT_DIR } });
    // Pods and selectors as in the default variant: the Service reaches them the same way.
    expect(deployment['spec'].template.metadata.labels).toEqual(find(byController, 'Deployment')['spec'].template.metadata.labels);
    expect(find(byCertManager, 'Service')['spec']).toEqual(find(byController, 'Service')['spec']);
  });

  it('grants the controller no right on Secrets nor on the CRD: its ClusterRole is the reconcile rules, its only Role the Lease', () => {
    const subject = (o: Obj) => (o['subjects'] ?? []).some((s: Obj) => s['kind'] === 'ServiceAccount' && s['name'] === 'backupschedule-operator');
    const bound = byCertManager.filter((o) => (o['kind'] === 'RoleBinding' || o['kind'] === 'ClusterRoleBinding') && subject(o)).map((b) => `${b['roleRef'].kind}/${b['roleRef'].name}`);
    expect(bound.sort()).toEqual(['ClusterRole/backupschedule-operator', 'Role/backupschedule-operator-leader-election']);
    expect(find(byCertManager, 'ClusterRole', 'backupschedule-operator')['rules']).toEqual([...CLUSTER_RULES]);
    const resources = bound.flatMap((ref) => find(byCertManager, ref.split('/')[0]!, ref.split('/')[1])['rules'].flatMap((r: Obj) => r['resources']));
    expect(resources).not.toContain('secrets');
    expect(resources).not.toContain('customresourcedefinitions');
    // The default variant has both, which is the difference.
    expect(find(byController, 'ClusterRole', 'backupschedule-operator')['rules']).toHaveLength(CLUSTER_RULES.length + 1);
  });

  it('refuses an unknown certificates value, naming the prop', () => {
    expect(() => synthChart({ certificates: 'vault' as never })).toThrow(`OperatorChart: certificates: expected 'controller' or 'cert-manager', got "vault"`);
    expect(() => new ConversionWebhook(new Chart(Testing.app(), 'x'), 'hook', { namespace: 'ops', serviceName: 'hook', secretName: 'hook-tls', selector: {}, certificates: 'self' as never })).toThrow(
      `ConversionWebhook: certificates: expected 'controller' or 'cert-manager', got "self"`,
    );
  });
});

describe("synthesize with certificates: 'cert-manager'", () => {
  const dir = mkdtempSync(join(tmpdir(), 'synth-cert-manager-'));
  const controllerDir = mkdtempSync(join(tmpdir(), 'synth-controller-'));
  afterAll(() => [dir, controllerDir].forEach((d) => rmSync(d, { recursive: true, force: true })));
  const files = synthesize(dir, { certificates: 'cert-manager', includeExample: false })[0]?.files ?? [];

  it('puts the Issuers, then the Certificates, after the Lease and before the Service and the Deployment that mounts the Secret', () => {
    expect(files.slice(-8)).toEqual([
      '11-lease-backupschedule-operator-leader.yaml',
      '12-issuer-backupschedule-operator-selfsigned.yaml',
      '13-issuer-backupschedule-operator-webhook-ca.yaml',
      '14-certificate-backupschedule-operator-webhook-ca.yaml',
      '15-certificate-backupschedule-operator-webhook-serving.yaml',
      '16-service-backupschedule-operator-webhook.yaml',
      '17-deployment-backupschedule-operator.yaml',
      '18-networkpolicy-backupschedule-operator.yaml',
    ]);
    expect(files.some((f) => f.includes('-secret-') || f.includes('webhook-certificate'))).toBe(false);
    const waves = files.map((f) => Number((parse(readFileSync(join(dir, f), 'utf8')) as Obj)['metadata'].annotations[SYNC_WAVE_ANNOTATION]));
    expect(waves, 'file order follows the sync waves').toEqual([...waves].sort((a, b) => a - b));
    expect((parse(readFileSync(join(dir, 'Kustomization'), 'utf8')) as Obj)['resources']).toEqual(files);
  });

  it("leaves the default output byte for byte as it is with certificates: 'controller' spelled out", () => {
    synthesize(controllerDir, { includeExample: false, certificates: 'controller' });
    const defaults = mkdtempSync(join(tmpdir(), 'synth-default-'));
    try {
      synthesize(defaults, { includeExample: false });
      const read = (d: string) => readdirSync(d).filter((f) => f.endsWith('.yaml') || f === 'Kustomization').map((f) => [f, readFileSync(join(d, f), 'utf8')]);
      expect(read(controllerDir)).toEqual(read(defaults));
    } finally {
      rmSync(defaults, { recursive: true, force: true });
    }
  });
});
