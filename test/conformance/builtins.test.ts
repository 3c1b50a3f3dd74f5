/**
 * Built-in validation and defaulting: DNS-1123 names, the 52-character CronJob name limit, cron syntax,
 * and the exact server-side defaults of CronJobs, Jobs and pod templates, compared field by field with
 * the recorded cronjob-v1beta1-*.json (batch/v1 has the same spec defaults).
 */
import { isIP, isIPv6 } from 'node:net';
import { describe, expect, it } from 'vitest';
import { recordedCronJobRequest } from '../fixtures/k8s-reference.ts';
import { failure, must, useCluster } from './harness.ts';

const cluster = useCluster();

const cronJobs = (ns: string): string => `/apis/batch/v1/namespaces/${ns}/cronjobs`;

/** Drops `creationTimestamp: null` from template metadata: newer servers omit the empty timestamp. */
function withoutNullTimestamps(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNullTimestamps);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (!(k === 'creationTimestamp' && v === null)) out[k] = withoutNullTimestamps(v);
    return out;
  }
  return value;
}

const dnsSubdomainMessage =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

describe('built-in validation', () => {
  it('rejects a ConfigMap name that is not a DNS-1123 subdomain with the exact 422', async () => {
    const ns = await cluster().namespace('bi');
    const res = await cluster().api.post(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name' } });
    expect(res.status).toBe(422);
    const cause = `Invalid value: "Bad_Name": ${dnsSubdomainMessage}`;
    expect(res.body).toEqual(
      failure(422, 'Invalid', `ConfigMap "Bad_Name" is invalid: metadata.name: ${cause}`, {
        name: 'Bad_Name',
        kind: 'ConfigMap',
        causes: [{ reason: 'FieldValueInvalid', message: cause, field: 'metadata.name' }],
      }),
    );
  });

  it('rejects a Namespace name that is not a DNS-1123 label', async () => {
    const res = await cluster().api.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bad.name' } });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ reason: 'Invalid', details: { name: 'bad.name', kind: 'Namespace', causes: [{ field: 'metadata.name', reason: 'FieldValueInvalid' }] } });
    expect(res.body.message).toContain('a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\'');
  });

  it('rejects a CronJob name of 53 characters with the exact 422', async () => {
    const ns = await cluster().namespace('bi');
    const name = 'a'.repeat(53);
    const body = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name }, spec: { schedule: '@daily', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } } };
    const res = await cluster().api.post(cronJobs(ns), body);
    expect(res.status).toBe(422);
    const cause = `Invalid value: "${name}": must be no more than 52 characters`;
    expect(res.body).toEqual(
      failure(422, 'Invalid', `CronJob.batch "${name}" is invalid: metadata.name: ${cause}`, {
        name,
        group: 'batch',
        kind: 'CronJob',
        causes: [{ reason: 'FieldValueInvalid', message: cause, field: 'metadata.name' }],
      }),
    );
    const ok = await cluster().api.post(cronJobs(ns), { ...body, metadata: { name: 'a'.repeat(52) } });
    expect(ok.status).toBe(201);
  });

  it('rejects an invalid cron schedule, a missing image and a missing restartPolicy in one 422', async () => {
    const ns = await cluster().namespace('bi');
    const body = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'bad' }, spec: { schedule: 'not a cron', jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c' }] } } } } } };
    const res = await cluster().api.post(cronJobs(ns), body);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422, details: { name: 'bad', group: 'batch', kind: 'CronJob' } });
    const causes = (res.body.details as { causes: Array<{ field: string; reason: string; message: string }> }).causes;
    // robfig/cron v1 (Kubernetes 1.20): `Expected exactly 5 fields, found 3: not a cron`; v3 (current): lower case, fields as a list.
    expect(causes).toContainEqual({
      reason: 'FieldValueInvalid',
      message: expect.stringMatching(/^Invalid value: "not a cron": ([Ee])xpected exactly 5 fields, found 3: (not a cron|\[not a cron\])$/),
      field: 'spec.schedule',
    });
    expect(causes).toContainEqual({ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.jobTemplate.spec.template.spec.containers[0].image' });
    expect(causes.map((c) => c.field)).toContain('spec.jobTemplate.spec.template.spec.restartPolicy');
    expect(res.body.message).toMatch(/^CronJob\.batch "bad" is invalid: \[/);
  });
});

describe('built-in defaulting', () => {
  it('defaults a CronJob and its pod template exactly as Kubernetes does', async () => {
    const ns = await cluster().namespace('bi');
    const request = recordedCronJobRequest({ name: 'minimal' });
    const res = await cluster().api.post(cronJobs(ns), request);
    expect(res.status, res.text).toBe(201);
    // cronjob-v1beta1-created-with-server-defaults.json, spec and status verbatim.
    const expectedSpec = {
      schedule: '0 2 * * *',
      concurrencyPolicy: 'Allow',
      suspend: false,
      jobTemplate: {
        metadata: { creationTimestamp: null },
        spec: {
          template: {
            metadata: { creationTimestamp: null },
            spec: {
              volumes: [
                { name: 'v', persistentVolumeClaim: { claimName: 'pvc' } },
                { name: 's', secret: { secretName: 'x', defaultMode: 420 } },
                { name: 'cm', configMap: { name: 'y', defaultMode: 420 } },
              ],
              containers: [
                {
                  name: 'c',
                  image: 'busybox:1.36',
                  command: ['sh', '-c', 'echo hi'],
                  ports: [{ containerPort: 80, protocol: 'TCP' }],
                  env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }],
                  resources: {},
                  volumeMounts: [{ name: 'v', mountPath: '/b' }],
                  terminationMessagePath: '/dev/termination-log',
                  terminationMessagePolicy: 'File',
                  imagePullPolicy: 'IfNotPresent',
                },
              ],
              restartPolicy: 'OnFailure',
              terminationGracePeriodSeconds: 30,
              dnsPolicy: 'ClusterFirst',
              securityContext: {},
              schedulerName: 'default-scheduler',
            },
          },
        },
      },
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
    };
    expect(withoutNullTimestamps(res.body.spec)).toEqual(withoutNullTimestamps(expectedSpec));
    expect(res.body.status).toEqual({});
    const got = must(await cluster().api.get(`${cronJobs(ns)}/minimal`), 200);
    expect(got.spec).toEqual(res.body.spec);
  });

  it('treats an update that omits only defaulted fields as a no-op (same resourceVersion)', async () => {
    const ns = await cluster().namespace('bi');
    const request = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'noop' }, spec: { schedule: '@daily', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } } };
    const created = must(await cluster().api.post(cronJobs(ns), request), 201);
    const again = must(await cluster().api.put(`${cronJobs(ns)}/noop`, { ...request, metadata: { name: 'noop', resourceVersion: created.metadata.resourceVersion } }), 200);
    expect(again.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(again.spec).toEqual(created.spec);
  });

  it.each([
    ['busybox', 'Always'],
    ['busybox:latest', 'Always'],
    ['busybox:1.36', 'IfNotPresent'],
    ['registry.example.com:5000/team/busybox', 'Always'],
    ['registry.example.com:5000/team/busybox:1.36', 'IfNotPresent'],
    ['busybox@sha256:0000000000000000000000000000000000000000000000000000000000000000', 'IfNotPresent'],
  ])('defaults imagePullPolicy of image %s to %s', async (image, policy) => {
    const ns = await cluster().namespace('bi');
    const body = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'img' }, spec: { schedule: '@daily', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image }] } } } } } };
    const res = await cluster().api.post(cronJobs(ns), body);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ spec: { jobTemplate: { spec: { template: { spec: { containers: [{ image, imagePullPolicy: policy }] } } } } } });
  });

  it('keeps explicit values instead of defaults', async () => {
    const ns = await cluster().namespace('bi');
    const body = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'explicit' },
      spec: {
        schedule: '@daily',
        concurrencyPolicy: 'Forbid',
        suspend: true,
        successfulJobsHistoryLimit: 0,
        failedJobsHistoryLimit: 5,
        jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', dnsPolicy: 'Default', containers: [{ name: 'c', image: 'busybox', imagePullPolicy: 'Never' }] } } } },
      },
    };
    const res = await cluster().api.post(cronJobs(ns), body);
    expect(res.status).toBe(201);
    expect(res.body.spec).toMatchObject({ concurrencyPolicy: 'Forbid', suspend: true, successfulJobsHistoryLimit: 0, failedJobsHistoryLimit: 5 });
    expect(res.body).toMatchObject({ spec: { jobTemplate: { spec: { template: { spec: { dnsPolicy: 'Default', containers: [{ imagePullPolicy: 'Never' }] } } } } } });
  });

  it('defaults a Job: parallelism, completions, backoffLimit, selector and pod template', async () => {
    const ns = await cluster().namespace('bi');
    const body = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j1' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] } } } };
    const res = await cluster().api.post(`/apis/batch/v1/namespaces/${ns}/jobs`, body);
    expect(res.status, res.text).toBe(201);
    expect(res.body.spec).toMatchObject({ parallelism: 1, completions: 1, backoffLimit: 6 });
    expect(res.body).toMatchObject({
      spec: {
        template: {
          metadata: { labels: { 'job-name': 'j1' } },
          spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', securityContext: {}, schedulerName: 'default-scheduler', containers: [{ terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent', resources: {} }] },
        },
      },
    });
    const selector = (res.body.spec as { selector?: { matchLabels?: Record<string, string> } }).selector;
    expect(Object.values(selector?.matchLabels ?? {})).toContain(res.body.metadata.uid);
  });

  it('defaults a ClusterIP Service as the webhook Service of dist/ is written: type, affinity, protocol, targetPort, one single-stack clusterIP', async (ctx) => {
    const ns = await cluster().namespace('bi');
    const body = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'hook' }, spec: { selector: { app: 'x' }, ports: [{ name: 'webhook', port: 443, targetPort: 'webhook' }, { name: 'plain', port: 8080 }] } };
    const created = must(await cluster().api.post(`/api/v1/namespaces/${ns}/services`, body), 201) as { metadata: object; spec: Record<string, any>; status: unknown };
    expect(created.spec).toMatchObject({
      type: 'ClusterIP',
      sessionAffinity: 'None',
      ports: [
        { name: 'webhook', port: 443, targetPort: 'webhook', protocol: 'TCP' },
        { name: 'plain', port: 8080, targetPort: 8080, protocol: 'TCP' },
      ],
    });
    if (await cluster().has(ctx, 'service-internal-traffic-policy')) expect(created.spec['internalTrafficPolicy']).toBe('Cluster');
    else expect(created.spec).not.toHaveProperty('internalTrafficPolicy');
    if (await cluster().has(ctx, 'service-ip-families')) {
      expect(created.spec['ipFamilyPolicy']).toBe('SingleStack');
      // The cluster's primary family (IPv4 here; an IPv6-primary cluster allocates from its IPv6 range).
      expect(created.spec['ipFamilies']).toEqual([isIPv6(created.spec['clusterIP']) ? 'IPv6' : 'IPv4']);
    } else {
      expect(created.spec).not.toHaveProperty('ipFamilyPolicy');
      expect(created.spec).not.toHaveProperty('ipFamilies');
    }
    expect(isIP(created.spec['clusterIP'])).not.toBe(0);
    expect(created.spec['clusterIPs']).toEqual([created.spec['clusterIP']]);
    expect(created.status).toEqual({ loadBalancer: {} });
    // A re-apply that leaves the allocated address out keeps it (kube copies it from the stored object).
    const { clusterIP: _ip, clusterIPs: _ips, ...rest } = created.spec;
    const reapplied = await cluster().api.put(`/api/v1/namespaces/${ns}/services/hook`, { ...body, metadata: created.metadata, spec: rest });
    if (!(await cluster().has(ctx, 'service-update-keeps-cluster-ip'))) {
      expect(reapplied.status).toBe(422);
      expect(reapplied.body).toMatchObject({ reason: 'Invalid', details: { causes: [{ reason: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', message: 'Invalid value: []string(nil): primary clusterIP can not be unset' }] } });
      return;
    }
    const again = must(reapplied, 200) as unknown as { spec: Record<string, unknown> };
    expect(again.spec['clusterIP']).toBe(created.spec['clusterIP']);
  });
});
