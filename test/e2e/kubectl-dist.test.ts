/**
 * dist/ as a user deploys it, with the real kubectl against a fresh test API server (issue 3's
 * acceptance): `kubectl create -f dist/` then `kubectl create -f dist/examples/`, one pass each, as on a
 * real cluster — kubectl reads a directory in file name order and maps every object before creating
 * any, so the file names carry the apply order and the example (a custom resource) waits for the second
 * call. `kubectl apply -k dist/` works from the `Kustomization` files.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { startTestApiServer } from '../apiserver/index.ts';
import { distDocuments, exampleDocuments, type TestApiServer } from './harness.ts';

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
const EXAMPLES = join(DIST, 'examples');
const run = promisify(execFile);

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

let server: TestApiServer;
let dir: string;

beforeEach(async () => {
  server = await startTestApiServer({ enforceOwnerReferencePermissions: true });
  dir = mkdtempSync(join(tmpdir(), 'kubectl-dist-'));
  writeFileSync(join(dir, 'kubeconfig'), server.kubeconfig());
});
afterEach(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs kubectl asynchronously (the API server answers from this process), with a private discovery cache. */
async function kubectl(...args: string[]): Promise<Result> {
  try {
    const { stdout, stderr } = await run('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), '--cache-dir', join(dir, 'cache'), ...args], { timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
  }
}

/** kubectl's `<resource>.<group>/<name> created` line for an object. */
function createdLine(doc: { apiVersion?: string; kind?: string; metadata: { name?: string } }): string {
  const group = doc.apiVersion?.includes('/') ? `.${doc.apiVersion.split('/')[0]}` : '';
  return `${doc.kind?.toLowerCase()}${group}/${doc.metadata.name} created`;
}

describe('kubectl with dist/', () => {
  it('creates dist/ in one pass, then dist/examples/ in one pass, and lists the example with its printer columns', async () => {
    const operator = await kubectl('create', '-f', DIST);
    expect(operator.stderr).toBe('');
    expect(operator.code).toBe(0);
    // In file order: the Namespace first, the Deployment last, nothing from examples/ or the Kustomization.
    expect(operator.stdout.trim().split('\n')).toEqual(distDocuments().map(createdLine));

    const examples = await kubectl('create', '-f', EXAMPLES);
    expect(examples.stderr).toBe('');
    expect(examples.code).toBe(0);
    expect(examples.stdout.trim().split('\n')).toEqual(exampleDocuments().map(createdLine));

    const got = await kubectl('get', 'backupschedules', '-A');
    expect(got.code, got.stderr).toBe(0);
    const [header, row] = got.stdout.trim().split('\n');
    expect(header?.split(/\s{2,}/)).toEqual(['NAMESPACE', 'NAME', 'SCHEDULE', 'SUSPENDED', 'LAST SCHEDULE', 'READY', 'LAST SUCCESS', 'LAST RESULT', 'AGE']);
    expect(row).toMatch(/^kubelings\s+nightly-etcd\s+0 2 \* \* \*\s+false\s+\d+s$/);
  });

  it('rejects an invalid BackupSchedule with a 422 naming the field', async () => {
    expect((await kubectl('create', '-f', DIST)).code).toBe(0);
    const example = parse(readFileSync(join(EXAMPLES, '01-backupschedule-nightly-etcd.yaml'), 'utf8')) as { metadata: object; spec: object };
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, stringify({ ...example, metadata: { name: 'bad', namespace: 'default' }, spec: { ...example.spec, retention: { keepLast: 0 } } }));
    const res = await kubectl('create', '-f', bad);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('The BackupSchedule "bad" is invalid: spec.retention.keepLast: Invalid value: 0');
    // kubectl -v shows the HTTP status of the refused create.
    const verbose = await kubectl('create', '-f', bad, '-v=6');
    expect(verbose.stderr).toMatch(/POST .*\/namespaces\/default\/backupschedules.* 422 /);
  });

  it('applies dist/ and dist/examples/ with kubectl apply -k (the Kustomization files)', async () => {
    const operator = await kubectl('apply', '-k', DIST);
    expect(operator.code, operator.stderr).toBe(0);
    expect(operator.stdout.trim().split('\n').sort()).toEqual(distDocuments().map(createdLine).sort());
    const examples = await kubectl('apply', '-k', EXAMPLES);
    expect(examples.code, examples.stderr).toBe(0);
    expect(examples.stdout.trim().split('\n').sort()).toEqual(exampleDocuments().map(createdLine).sort());
  });

  it('applies dist/ server-side, as Argo CD\'s ServerSideApply does: a re-apply and kubectl diff change nothing, a field dropped from the file is removed, another manager\'s field conflicts', async () => {
    const first = await kubectl('apply', '--server-side', '-f', DIST);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim().split('\n')).toEqual(distDocuments().map((d) => createdLine(d).replace(/ created$/, ' serverside-applied')));
    const diff = await kubectl('diff', '--server-side', '-f', DIST);
    expect(diff.stdout).toBe('');
    expect(diff.code).toBe(0);
    const file = join(DIST, readdirSync(DIST).find((f) => f.endsWith('-deployment-backupschedule-operator.yaml')) ?? 'no Deployment file in dist/');
    const deployment = parse(readFileSync(file, 'utf8')) as { metadata: { name: string; namespace: string; annotations?: Record<string, string> }; spec: { replicas: number } };
    const { 'argocd.argoproj.io/sync-wave': dropped, ...annotations } = deployment.metadata.annotations ?? {};
    expect(dropped).toBeDefined();
    const edited = join(dir, 'deployment.yaml');
    writeFileSync(edited, stringify({ ...deployment, metadata: { ...deployment.metadata, annotations } }));
    expect((await kubectl('apply', '--server-side', '-f', edited)).code).toBe(0);
    const live = JSON.parse((await kubectl('get', '-n', deployment.metadata.namespace, 'deployment', deployment.metadata.name, '-o', 'json')).stdout) as { metadata: { annotations?: Record<string, string> } };
    expect(live.metadata.annotations ?? {}).not.toHaveProperty('argocd.argoproj.io/sync-wave');
    // A scaler (HPA, kubectl edit) takes replicas; the next apply of a different count conflicts until forced.
    expect((await kubectl('patch', '-n', deployment.metadata.namespace, 'deployment', deployment.metadata.name, '--field-manager=scaler', '-p', '{"spec":{"replicas":5}}')).code).toBe(0);
    writeFileSync(edited, stringify({ ...deployment, spec: { ...deployment.spec, replicas: deployment.spec.replicas + 1 } }));
    const conflict = await kubectl('apply', '--server-side', '-f', edited);
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "scaler" using apps/v1: .spec.replicas');
    expect((await kubectl('apply', '--server-side', '--force-conflicts', '-f', edited)).code).toBe(0);
  });
});
