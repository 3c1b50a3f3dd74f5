/**
 * kubectl (the real client, v1.32) against the cluster through the kubeconfig only: create with the
 * default validation (no --validate=false), get with printer columns, a 422 naming the field, describe,
 * delete.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { dig, rand, useCluster, useWidgets, type Doc } from './harness.ts';
import { installGadgets } from './harness/gadget-crd.ts';

const cluster = useCluster();
const widgets = useWidgets(cluster);
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'conformance-kubectl-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function kubectl(...args: string[]): Promise<Result> {
  // A private cache dir: discovery must come from this server, not from an earlier run.
  const full = ['--kubeconfig', cluster().kubeconfigPath, '--cache-dir', join(dir, 'cache'), ...args];
  try {
    const { stdout, stderr } = await run('kubectl', full, { timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
  }
}

function file(name: string, doc: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, stringify(doc));
  return path;
}

describe('kubectl', () => {
  it('creates a Widget from YAML with default validation, prints it with its printer columns, describes and deletes it', async () => {
    const w = widgets();
    const ns = await cluster().namespace('kubectl');
    const created = await kubectl('-n', ns, 'create', '-f', file('good.yaml', w.body('k1', { schedule: '@daily', size: 4 })));
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout.trim()).toBe(`widget.${w.group}/k1 created`);

    const got = await kubectl('-n', ns, 'get', `widgets.${w.group}`);
    expect(got.code, got.stderr).toBe(0);
    const [header, row] = got.stdout.trim().split('\n');
    expect(header?.split(/\s+/)).toEqual(['NAME', 'SIZE', 'READY', 'AGE']);
    // READY is empty (no status yet); AGE is a duration.
    expect(row).toMatch(/^k1\s+4\s+\d+s$/);

    const yaml = await kubectl('-n', ns, 'get', `widgets.${w.group}`, 'k1', '-o', 'jsonpath={.spec.mode}/{.spec.nested.keep}');
    expect(yaml.stdout).toBe('Safe/7');

    const described = await kubectl('-n', ns, 'describe', `widgets.${w.group}`, 'k1');
    expect(described.code, described.stderr).toBe(0);
    expect(described.stdout).toMatch(/^Name:\s+k1$/m);

    const deleted = await kubectl('-n', ns, 'delete', `widgets.${w.group}`, 'k1');
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout.trim()).toBe(`widget.${w.group} "k1" deleted`);
    expect((await cluster().api.get(w.path(ns, 'k1'))).status).toBe(404);
  });

  it('applies a Widget: created, then configured after a change, then unchanged', async () => {
    const w = widgets();
    const ns = await cluster().namespace('kubectl');
    const first = await kubectl('-n', ns, 'apply', '-f', file('apply1.yaml', w.body('k2', { schedule: '@daily', size: 2 })));
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toBe(`widget.${w.group}/k2 created`);
    const changed = file('apply2.yaml', w.body('k2', { schedule: '@daily', size: 3 }));
    const second = await kubectl('-n', ns, 'apply', '-f', changed);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout.trim()).toBe(`widget.${w.group}/k2 configured`);
    expect((await kubectl('-n', ns, 'apply', '-f', changed)).stdout.trim()).toBe(`widget.${w.group}/k2 unchanged`);
    const got = await cluster().api.get(w.path(ns, 'k2'));
    expect(got.body).toMatchObject({ spec: { size: 3 }, metadata: { generation: 2 } });
  });

  it('prints the 422 naming the invalid field when creating an invalid Widget', async () => {
    const w = widgets();
    const ns = await cluster().namespace('kubectl');
    const res = await kubectl('-n', ns, 'create', '-f', file('bad.yaml', w.body('bad', { schedule: '@daily', size: 11 })));
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('The Widget "bad" is invalid: spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10');
  });

  it('rejects an unknown field with kubectl\'s default strict validation', async (ctx) => {
    const w = widgets();
    const ns = await cluster().namespace('kubectl');
    const res = await kubectl('-n', ns, 'create', '-f', file('unknown.yaml', w.body('unk', { schedule: '@daily', bogus: 1 })));
    expect(res.code).not.toBe(0);
    if (await cluster().has(ctx, 'field-validation')) {
      expect(res.stderr).toContain('unknown field "spec.bogus"');
      return;
    }
    // Without server-side fieldValidation kubectl validates against the OpenAPI v2 document itself.
    expect(res.stderr).toContain('ValidationError(Widget.spec): unknown field "bogus" in ');
    expect((await cluster().api.get(w.path(ns, 'unk'))).status).toBe(404);
  });

  it('creates, lists and deletes a CronJob and a ConfigMap by their short names', async () => {
    const ns = await cluster().namespace('kubectl');
    const cj = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly' }, spec: { schedule: '0 2 * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] } } } } } };
    expect((await kubectl('-n', ns, 'create', '-f', file('cj.yaml', cj))).stdout.trim()).toBe('cronjob.batch/nightly created');
    const got = await kubectl('-n', ns, 'get', 'cj');
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout.split('\n')[0]).toMatch(/^NAME\s+SCHEDULE\s+(TIMEZONE\s+)?SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE$/);
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm1' }, data: { a: 'b' } };
    expect((await kubectl('-n', ns, 'create', '-f', file('cm.yaml', cm))).stdout.trim()).toBe('configmap/cm1 created');
    expect((await kubectl('-n', ns, 'get', 'cm', 'cm1', '-o', 'jsonpath={.data.a}')).stdout).toBe('b');
    expect((await kubectl('-n', ns, 'delete', 'cj', 'nightly')).stdout.trim()).toBe('cronjob.batch "nightly" deleted');
  });

  it('issues a ServiceAccount token with kubectl create token (a protobuf TokenRequest) that authenticates as the account', async () => {
    const ns = await cluster().namespace('kubectl');
    expect((await kubectl('-n', ns, 'create', 'serviceaccount', 'tok')).stdout.trim()).toBe('serviceaccount/tok created');
    const created = await kubectl('-n', ns, 'create', 'token', 'tok', '--duration=20m');
    expect(created.stderr).toBe('');
    const token = created.stdout.trim();
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp: number; iat: number };
    expect(claims.exp - claims.iat).toBe(1200);
    // Through a client without the kubeconfig's client certificate, which would authenticate first. The
    // account has no grants: the 403 names who the server took the token for (every release says so).
    const asAccount = cluster().api.as(token);
    try {
      const denied = await asAccount.get(`/api/v1/namespaces/${ns}/configmaps`);
      expect(denied.status).toBe(403);
      expect(denied.body.message).toContain(`User "system:serviceaccount:${ns}:tok"`);
    } finally {
      asAccount.close();
    }
  });

  it('reports a ServiceAccount token\'s user in a SelfSubjectReview (kubectl auth whoami)', async (ctx) => {
    cluster().require(ctx, 'self-subject-review');
    const ns = await cluster().namespace('kubectl');
    const sa = await cluster().serviceAccount(ns, 'who');
    const me = await sa.client.post('/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    expect(me.status, me.text).toBe(201);
    expect(dig(me.body, 'status.userInfo.username')).toBe(sa.user);
  });

  it('creates a CronJob, a Job and a Deployment with kubectl create (protobuf bodies)', async () => {
    const ns = await cluster().namespace('kubectl');
    expect((await kubectl('-n', ns, 'create', 'cronjob', 'cj', '--image=busybox:1.36', '--schedule=*/5 * * * *', '--', 'sh', '-c', 'echo hi')).stdout.trim()).toBe('cronjob.batch/cj created');
    expect((await kubectl('-n', ns, 'create', 'job', 'j', '--image=busybox:1.36', '--', 'echo', 'hi')).stdout.trim()).toBe('job.batch/j created');
    expect((await kubectl('-n', ns, 'create', 'deployment', 'd', '--image=nginx:1.27', '--replicas=0', '--port=8080')).stdout.trim()).toBe('deployment.apps/d created');
    const get = async (what: string): Promise<Doc> => JSON.parse((await kubectl('-n', ns, 'get', what, '-o', 'json')).stdout) as Doc;
    const cj = await get('cronjob/cj');
    expect(dig(cj, 'spec.schedule')).toBe('*/5 * * * *');
    expect(dig(cj, 'spec.jobTemplate.spec.template.spec.restartPolicy')).toBe('OnFailure');
    expect(dig(cj, 'spec.jobTemplate.spec.template.spec.containers')).toMatchObject([{ name: 'cj', image: 'busybox:1.36', command: ['sh', '-c', 'echo hi'] }]);
    const job = await get('job/j');
    expect(dig(job, 'spec.template.spec')).toMatchObject({ restartPolicy: 'Never', containers: [{ name: 'j', image: 'busybox:1.36', command: ['echo', 'hi'] }] });
    const deployment = await get('deployment/d');
    expect(dig(deployment, 'spec.replicas')).toBe(0);
    expect(dig(deployment, 'spec.selector')).toEqual({ matchLabels: { app: 'd' } });
    expect(dig(deployment, 'spec.template.spec.containers')).toMatchObject([{ name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 8080 }] }]);
  });

  it('runs a CronJob now with kubectl create job --from=cronjob, copying its whole pod template (protobuf body)', async () => {
    const ns = await cluster().namespace('kubectl');
    const podSpec = {
      restartPolicy: 'Never',
      serviceAccountName: 'default',
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: 65532, fsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } },
      volumes: [{ name: 'creds', secret: { secretName: 'etcd-tls', defaultMode: 0o400 } }, { name: 'scratch', emptyDir: { sizeLimit: '1Gi' } }, { name: 'out', persistentVolumeClaim: { claimName: 'backups' } }],
      containers: [{
        name: 'backup',
        image: 'busybox:1.36',
        args: ['--keep', '7'],
        env: [{ name: 'A', value: 'b' }, { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'pw', key: 'password', optional: false } } }],
        resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
        securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        volumeMounts: [{ name: 'creds', mountPath: '/tls', readOnly: true }, { name: 'out', mountPath: '/out' }],
      }],
    };
    const cj = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly', labels: { app: 'backup' } }, spec: { schedule: '0 2 * * *', jobTemplate: { spec: { backoffLimit: 0, activeDeadlineSeconds: 600, template: { spec: podSpec } } } } };
    expect((await kubectl('-n', ns, 'create', '-f', file('rich-cj.yaml', cj))).code).toBe(0);
    const created = await kubectl('-n', ns, 'create', 'job', 'now', '--from=cronjob/nightly');
    expect(created.stderr).toBe('');
    const stored = JSON.parse((await kubectl('-n', ns, 'get', 'cronjob', 'nightly', '-o', 'json')).stdout) as Doc;
    const job = JSON.parse((await kubectl('-n', ns, 'get', 'job', 'now', '-o', 'json')).stdout) as Doc;
    expect(dig(job, 'spec.template.spec')).toEqual(dig(stored, 'spec.jobTemplate.spec.template.spec'));
    expect(dig(job, 'spec.backoffLimit')).toBe(0);
    expect(dig(job, 'spec.activeDeadlineSeconds')).toBe(600);
    expect(dig(job, 'metadata.annotations')).toMatchObject({ 'cronjob.kubernetes.io/instantiate': 'manual' });
    expect(dig(job, 'metadata.ownerReferences')).toEqual([{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: stored.metadata.uid, controller: true }]);
  });

  it('gets a multi-version custom resource in the preferred version and in an explicit one, each with its own columns', async () => {
    const g = await installGadgets(cluster().api, `k${rand()}.fixtures.example.com`, { storage: 'v1', conversion: { strategy: 'None' } });
    cluster().cleanupLater(g.crdPath);
    const ns = await cluster().namespace('kubectl');
    expect((await kubectl('-n', ns, 'create', '-f', file('gadget.yaml', g.body('v1', 'g1', 'green')))).code).toBe(0);
    const table = async (resource: string): Promise<string[][]> => {
      const got = await kubectl('-n', ns, 'get', resource);
      expect(got.code, got.stderr).toBe(0);
      return got.stdout.trim().split('\n').map((l) => l.split(/\s+/));
    };
    const preferred = await table(`gadgets.${g.group}`);
    expect(preferred[0]).toEqual(['NAME', 'PAINT', 'AGE']);
    expect(preferred[1]?.slice(0, 2)).toEqual(['g1', 'green']);
    expect((await table(`gadgets.v1alpha1.${g.group}`))[0]).toEqual(['NAME', 'COLOR', 'AGE']);
    expect((await kubectl('-n', ns, 'get', `gadgets.v1alpha1.${g.group}`, 'g1', '-o', 'jsonpath={.apiVersion}')).stdout).toBe(`${g.group}/v1alpha1`);
  });

  it('scales a Deployment with kubectl scale (the scale subresource)', async () => {
    const ns = await cluster().namespace('kubectl');
    expect((await kubectl('-n', ns, 'create', 'deployment', 'web', '--image=nginx:1.27')).code).toBe(0);
    const scaled = await kubectl('-n', ns, 'scale', 'deployment', 'web', '--replicas=3');
    expect(scaled.stderr).toBe('');
    expect(scaled.stdout.trim()).toBe('deployment.apps/web scaled');
    expect((await kubectl('-n', ns, 'get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas}')).stdout).toBe('3');
    const refused = await kubectl('-n', ns, 'scale', 'deployment', 'web', '--replicas=1', '--current-replicas=5');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('Expected replicas to be 5, was 3');
  });
});
