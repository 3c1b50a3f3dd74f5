import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/object.ts';
import { loadReference, recordedCronJobRequestPodSpec } from '../../fixtures/k8s-reference.ts';
import { applyBuiltinDefaults } from './defaults.ts';
import { prepareJobForCreate } from './job-selector.ts';
import { imageTag } from './pod-defaults.ts';

const cronJob = (podSpec: Record<string, unknown>, schedule = '0 2 * * *'): KubeObject => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name: 'minimal', namespace: 'kubelings' },
  spec: { schedule, jobTemplate: { spec: { template: { spec: podSpec } } } },
});

describe('applyBuiltinDefaults for CronJobs', () => {
  it('adds exactly the defaults of cronjob-v1beta1-created-with-server-defaults.json', () => {
    const recorded = loadReference<KubeObject>('cronjob-v1beta1-created-with-server-defaults.json');
    const request = cronJob(recordedCronJobRequestPodSpec());
    applyBuiltinDefaults('batch', 'cronjobs', request);
    expect(request['spec']).toEqual(recorded['spec']);
    expect(request['status']).toEqual(recorded['status']);
  });

  it('pulls untagged images Always, as in cronjob-v1beta1-untagged-image-defaults.json', () => {
    const recorded = loadReference<KubeObject>('cronjob-v1beta1-untagged-image-defaults.json');
    const request = cronJob({ containers: [{ name: 'c', image: 'busybox' }], restartPolicy: 'Never' }, '@daily');
    applyBuiltinDefaults('batch', 'cronjobs', request);
    expect(request['spec']).toEqual(recorded['spec']);
  });

  it('keeps values the client set, including zero history limits and suspend true', () => {
    const request = cronJob({ containers: [{ name: 'c', image: 'x:1', imagePullPolicy: 'Never' }], restartPolicy: 'Never', dnsPolicy: 'None', terminationGracePeriodSeconds: 0 });
    Object.assign(request['spec'] as object, { concurrencyPolicy: 'Forbid', suspend: true, successfulJobsHistoryLimit: 0, failedJobsHistoryLimit: 0 });
    applyBuiltinDefaults('batch', 'cronjobs', request);
    expect(request['spec']).toMatchObject({ concurrencyPolicy: 'Forbid', suspend: true, successfulJobsHistoryLimit: 0, failedJobsHistoryLimit: 0 });
    const podSpec = (request['spec'] as { jobTemplate: { spec: { template: { spec: Record<string, unknown> } } } }).jobTemplate.spec.template.spec;
    expect(podSpec).toMatchObject({ dnsPolicy: 'None', terminationGracePeriodSeconds: 0, restartPolicy: 'Never' });
    expect((podSpec['containers'] as Array<Record<string, unknown>>)[0]?.['imagePullPolicy']).toBe('Never');
  });

  it('is idempotent: defaulting a defaulted CronJob changes nothing', () => {
    const request = cronJob({ containers: [{ name: 'c', image: 'busybox' }] });
    applyBuiltinDefaults('batch', 'cronjobs', request);
    const once = structuredClone(request);
    applyBuiltinDefaults('batch', 'cronjobs', request);
    expect(request).toEqual(once);
  });
});

describe('applyBuiltinDefaults for Jobs', () => {
  const job = (spec: Record<string, unknown>): KubeObject => ({ metadata: { name: 'j' }, spec: { template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i:1' }], restartPolicy: 'Never' } }, ...spec } });

  it('applies SetDefaults_Job when nothing is set', () => {
    const j = job({});
    applyBuiltinDefaults('batch', 'jobs', j);
    expect(j['spec']).toMatchObject({ completions: 1, parallelism: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false, podReplacementPolicy: 'TerminatingOrFailed' });
    expect(j.metadata.labels).toEqual({ app: 'x' });
    expect(j['status']).toEqual({});
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['only parallelism set leaves completions unset', { parallelism: 3 }, { parallelism: 3, completions: undefined }],
    ['only completions set defaults parallelism to 1', { completions: 5 }, { parallelism: 1, completions: 5 }],
    ['backoffLimitPerIndex makes backoffLimit MaxInt32', { backoffLimitPerIndex: 1 }, { backoffLimit: 2147483647 }],
    ['a podFailurePolicy makes podReplacementPolicy Failed', { podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] } }, { podReplacementPolicy: 'Failed', podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] } }],
  ])('%s', (_name, spec, expected) => {
    const j = job(spec);
    applyBuiltinDefaults('batch', 'jobs', j);
    for (const [key, value] of Object.entries(expected)) expect((j['spec'] as Record<string, unknown>)[key]).toEqual(value);
  });
});

describe('applyBuiltinDefaults for pod templates', () => {
  it('defaults probes, handlers, fieldRefs and volumes without a source', () => {
    const c = cronJob({
      volumes: [{ name: 'scratch' }, { name: 'h', hostPath: { path: '/x' } }, { name: 'p', projected: { sources: [] } }],
      containers: [
        {
          name: 'c',
          image: 'registry:5000/img',
          livenessProbe: { httpGet: { port: 8080 } },
          lifecycle: { preStop: { httpGet: { port: 80 } } },
          env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
        },
      ],
    });
    applyBuiltinDefaults('batch', 'cronjobs', c);
    const podSpec = (c['spec'] as { jobTemplate: { spec: { template: { spec: Record<string, unknown> } } } }).jobTemplate.spec.template.spec;
    expect(podSpec['volumes']).toEqual([
      { name: 'scratch', emptyDir: {} },
      { name: 'h', hostPath: { path: '/x', type: '' } },
      { name: 'p', projected: { sources: [], defaultMode: 420 } },
    ]);
    expect((podSpec['containers'] as unknown[])[0]).toMatchObject({
      imagePullPolicy: 'Always',
      livenessProbe: { httpGet: { port: 8080, path: '/', scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
      lifecycle: { preStop: { httpGet: { port: 80, path: '/', scheme: 'HTTP' } } },
      env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } } }],
    });
    expect(podSpec['restartPolicy']).toBe('Always');
  });

  it.each([
    ['busybox', 'latest'],
    ['busybox:latest', 'latest'],
    ['busybox:1.36', '1.36'],
    ['localhost:5000/busybox', 'latest'],
    ['localhost:5000/busybox:v1', 'v1'],
    ['busybox@sha256:abc', ''],
    ['busybox:1.36@sha256:abc', '1.36'],
  ])('finds the tag of %s as %j', (image, tag) => {
    expect(imageTag(image)).toBe(tag);
  });
});

describe('applyBuiltinDefaults for other kinds', () => {
  it('gives a namespace its name label, the kubernetes finalizer and phase Active', () => {
    const ns: KubeObject = { metadata: { name: 'team-a' } };
    applyBuiltinDefaults('', 'namespaces', ns);
    expect(ns).toEqual({ metadata: { name: 'team-a', labels: { 'kubernetes.io/metadata.name': 'team-a' } }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
  });

  it('keeps a namespace finalizer list the client emptied (finalization)', () => {
    const ns: KubeObject = { metadata: { name: 'a' }, spec: { finalizers: [] }, status: { phase: 'Terminating' } };
    applyBuiltinDefaults('', 'namespaces', ns);
    expect(ns['spec']).toEqual({ finalizers: [] });
    expect(ns['status']).toEqual({ phase: 'Terminating' });
  });

  it('serializes the empty fields of a core/v1 Event as event-core-v1-create.json shows', () => {
    const recorded = loadReference<KubeObject>('event-core-v1-create.json');
    const event: KubeObject = { metadata: { name: 'e' }, reason: 'Created', type: 'Normal' };
    applyBuiltinDefaults('', 'events', event);
    expect({ eventTime: event['eventTime'], reportingComponent: event['reportingComponent'], reportingInstance: event['reportingInstance'] }).toEqual({
      eventTime: recorded['eventTime'],
      reportingComponent: recorded['reportingComponent'],
      reportingInstance: recorded['reportingInstance'],
    });
  });

  it('defaults the apiGroup of binding roleRefs and User/Group subjects, not ServiceAccounts', () => {
    const binding: KubeObject = { metadata: { name: 'b' }, roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'User', name: 'u' }, { kind: 'ServiceAccount', name: 'sa', namespace: 'n' }] };
    applyBuiltinDefaults('rbac.authorization.k8s.io', 'rolebindings', binding);
    expect(binding['roleRef']).toEqual({ kind: 'Role', name: 'r', apiGroup: 'rbac.authorization.k8s.io' });
    expect(binding['subjects']).toEqual([{ kind: 'User', name: 'u', apiGroup: 'rbac.authorization.k8s.io' }, { kind: 'ServiceAccount', name: 'sa', namespace: 'n' }]);
  });

  it('leaves a Lease as lease-create-empty-spec.json shows', () => {
    const recorded = loadReference<KubeObject>('lease-create-empty-spec.json');
    const lease: KubeObject = { metadata: { name: 'op-leader' }, spec: {} };
    applyBuiltinDefaults('coordination.k8s.io', 'leases', lease);
    expect(lease['spec']).toEqual(recorded['spec']);
  });
});

describe('prepareJobForCreate', () => {
  it('labels the template with the uid and name and selects on the uid', () => {
    const job: KubeObject = { metadata: { name: 'j', uid: 'u-1' }, spec: { template: { metadata: { labels: { app: 'x' } }, spec: {} } } };
    prepareJobForCreate(job);
    expect(job['spec']).toMatchObject({
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'u-1' } },
      template: { metadata: { labels: { app: 'x', 'batch.kubernetes.io/controller-uid': 'u-1', 'batch.kubernetes.io/job-name': 'j', 'controller-uid': 'u-1', 'job-name': 'j' } } },
    });
  });

  it('leaves a manual selector and a Job without uid alone', () => {
    const manual: KubeObject = { metadata: { name: 'j', uid: 'u' }, spec: { manualSelector: true, template: {} } };
    prepareJobForCreate(manual);
    expect(manual['spec']).toEqual({ manualSelector: true, template: {} });
    const noUid: KubeObject = { metadata: { name: 'j' }, spec: { template: {} } };
    prepareJobForCreate(noUid);
    expect(noUid['spec']).toEqual({ template: {} });
  });
});
