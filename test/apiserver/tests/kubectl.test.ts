import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../index.ts';

const run = promisify(execFile);
// A developer machine without kubectl skips these; CI must have it (the machine image ships kubectl):
// there a missing kubectl fails the run instead of hiding it.
const hasKubectl = process.env['CI'] === 'true' || (await run('kubectl', ['version', '--client']).then(() => true, () => false));

let server: TestApiServer;
let kubeconfig: string;
let home: string;

async function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run('kubectl', ['--kubeconfig', kubeconfig, ...args], { env: { ...process.env, HOME: home } });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

beforeAll(async () => {
  server = await startTestApiServer();
  home = await mkdtemp(join(tmpdir(), 'kubectl-home-'));
  kubeconfig = join(home, 'kubeconfig');
  await server.writeKubeconfig(kubeconfig);
});
afterAll(async () => {
  await server.stop();
  await rm(home, { recursive: true, force: true });
});

describe.skipIf(!hasKubectl)('kubectl against the test API server', () => {
  it('creates a namespace (protobuf body) and lists it', async () => {
    expect((await kubectl('create', 'namespace', 'kubelings')).code).toBe(0);
    expect((await kubectl('get', 'ns')).stdout).toMatch(/^kubelings\s+Active\s+\d+s$/m);
  });

  it('creates a CRD and a custom resource with server-side field validation, and prints the printer columns', async () => {
    const crd = join(home, 'crd.json');
    await copyFile(new URL('../../fixtures/k8s-reference/crd-widget-request.json', import.meta.url), crd);
    expect((await kubectl('create', '-f', crd)).code).toBe(0);
    expect((await kubectl('wait', '--for=condition=Established', 'crd/widgets.fixtures.example.com', '--timeout=10s')).code).toBe(0);
    const widget = join(home, 'w.json');
    await writeFile(widget, JSON.stringify({ apiVersion: 'fixtures.example.com/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'kubelings' }, spec: { schedule: '@daily' } }));
    expect((await kubectl('create', '-f', widget)).code).toBe(0);
    const table = await kubectl('get', 'wd', '-A');
    expect(table.stdout.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME\s+SIZE\s+READY\s+AGE$/);
    expect(table.stdout).toMatch(/^kubelings\s+w1\s+3\s+\d+s$/m);
  });

  it('prints a 422 naming the field for an invalid custom resource', async () => {
    const bad = join(home, 'bad.json');
    await writeFile(bad, JSON.stringify({ apiVersion: 'fixtures.example.com/v1', kind: 'Widget', metadata: { name: 'w2', namespace: 'kubelings' }, spec: { schedule: 'every day' } }));
    const res = await kubectl('create', '-f', bad);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('The Widget "w2" is invalid: spec.schedule: Invalid value: "every day"');
  });

  it('describes and deletes', async () => {
    expect((await kubectl('describe', 'widget', '-n', 'kubelings', 'w1')).stdout).toMatch(/Schedule:\s+@daily/);
    expect((await kubectl('delete', 'widget', '-n', 'kubelings', 'w1')).stdout).toContain('widget.fixtures.example.com "w1" deleted');
    expect((await kubectl('get', 'widgets', '-n', 'kubelings')).stderr).toContain('No resources found');
  });

  it('answers auth can-i through impersonation and access reviews', async () => {
    await kubectl('create', 'serviceaccount', 'op', '-n', 'kubelings');
    expect((await kubectl('auth', 'can-i', 'list', 'widgets', '-n', 'kubelings', '--as=system:serviceaccount:kubelings:op')).stdout.trim()).toBe('no');
    expect((await kubectl('auth', 'can-i', 'list', 'widgets', '-n', 'kubelings')).stdout.trim()).toBe('yes');
  });

  it('prints the priority-1 columns of a built-in kind only with -o wide', async () => {
    const file = join(home, 'cj.json');
    const template = { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } };
    await writeFile(file, JSON.stringify({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj-wide', namespace: 'kubelings' }, spec: { schedule: '@daily', jobTemplate: { spec: { template } } } }));
    expect((await kubectl('create', '-f', file)).code).toBe(0);
    const narrow = (await kubectl('get', 'cronjob', 'cj-wide', '-n', 'kubelings')).stdout.split('\n')[0];
    expect(narrow?.split(/\s{2,}/)).toEqual(['NAME', 'SCHEDULE', 'TIMEZONE', 'SUSPEND', 'ACTIVE', 'LAST SCHEDULE', 'AGE']);
    const wide = (await kubectl('get', 'cronjob', 'cj-wide', '-n', 'kubelings', '-o', 'wide')).stdout.split('\n');
    expect(wide[0]?.split(/\s{2,}/)).toEqual(['NAME', 'SCHEDULE', 'TIMEZONE', 'SUSPEND', 'ACTIVE', 'LAST SCHEDULE', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']);
    expect(wide[1]).toMatch(/^cj-wide\s+@daily\s+<none>\s+False\s+0\s+<none>\s+\d+s\s+c\s+busybox\s+<none>$/);
  });

  it('writes a kubeconfig that trusts the server certificate', async () => {
    expect(await readFile(kubeconfig, 'utf8')).toContain('certificate-authority-data');
  });
});

describe.skipIf(!hasKubectl)('kubectl create of RBAC objects (protobuf bodies)', () => {
  it('creates a Role and RoleBinding that authorize exactly what they say', async () => {
    expect((await kubectl('create', 'role', 'r1', '-n', 'kubelings', '--verb=get', '--resource=configmaps', '--resource-name=x')).code).toBe(0);
    expect((await kubectl('create', 'rolebinding', 'rb1', '-n', 'kubelings', '--role=r1', '--user=dev', '--serviceaccount=kubelings:op')).code).toBe(0);
    const subjects = JSON.parse((await kubectl('get', 'rolebinding', 'rb1', '-n', 'kubelings', '-o', 'jsonpath={.subjects}')).stdout);
    expect(subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dev' }, { kind: 'ServiceAccount', name: 'op', namespace: 'kubelings' }]);
    expect((await kubectl('auth', 'can-i', 'get', 'configmaps/x', '-n', 'kubelings', '--as=dev')).stdout.trim()).toBe('yes');
    expect((await kubectl('auth', 'can-i', 'get', 'configmaps/y', '-n', 'kubelings', '--as=dev')).stdout.trim()).toBe('no');
  });

  it('issues a token with kubectl create token (protobuf TokenRequest) that authenticates as the ServiceAccount', async () => {
    expect((await kubectl('create', 'serviceaccount', 'tok', '-n', 'kubelings')).code).toBe(0);
    const created = await kubectl('create', 'token', 'tok', '-n', 'kubelings', '--duration=20m');
    expect(created.stderr).toBe('');
    const token = created.stdout.trim();
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp: number; iat: number };
    expect(claims.exp - claims.iat).toBe(1200);
    const whoami = await kubectl('auth', 'whoami', '--token', token);
    expect(whoami.stdout).toMatch(/^Username\s+system:serviceaccount:kubelings:tok$/m);
    expect((await kubectl('create', 'token', 'missing', '-n', 'kubelings')).stderr).toContain('serviceaccounts "missing" not found');
  });

  it('lists what a user may do with kubectl auth can-i --list (SelfSubjectRulesReview)', async () => {
    const res = await kubectl('auth', 'can-i', '--list', '-n', 'kubelings', '--as=dev');
    expect(res.stderr).toBe('');
    expect(res.stdout.split('\n')[0]).toMatch(/^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$/);
    expect(res.stdout).toMatch(/^configmaps\s+\[\]\s+\[x\]\s+\[get\]$/m);
    expect(res.stdout).toMatch(/^\s+\[\/version\]\s+\[\]\s+\[get\]$/m);
    expect((await kubectl('auth', 'can-i', '--list', '-n', 'default', '--as=dev')).stdout).not.toMatch(/^configmaps/m);
  });
});
