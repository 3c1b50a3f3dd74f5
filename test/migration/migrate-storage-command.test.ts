/**
 * `migrate-storage` as the image runs it: the controller bundle's subcommand, its own process, against
 * the test API server: exit codes, the JSON log lines, the failed objects named in the last line.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../src/kube/kube-client.ts';
import { KubeConfig } from '../../src/kube/kube-config.ts';
import { startTestApiServer, type TestApiServer } from '../apiserver/index.ts';
import { buildBundle } from '../e2e/harness.ts';
import { limitGadgetSize, seedGadgets } from './two-version-crd.ts';

let server: TestApiServer;
let client: KubeClient;
let bundle: string;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  [bundle, server] = await Promise.all([buildBundle(), startTestApiServer()]);
  client = new KubeClient({ config: KubeConfig.fromKubeconfig(server.kubeconfig()) });
  dir = mkdtempSync(join(process.env['BKS_TEST_TMP'] ?? tmpdir(), 'bks-migrate-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeconfig());
});

afterAll(async () => {
  client.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the bundle's `migrate-storage` (asynchronously: the API server runs in this process). */
function run(args: readonly string[], onStart?: (child: ReturnType<typeof spawn>) => void): Promise<{ code: number | null; lines: Record<string, unknown>[]; stderr: string }> {
  const child = spawn(process.execPath, [bundle, 'migrate-storage', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  onStart?.(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({
    code,
    lines: stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>),
    stderr,
  })));
}

describe('controller migrate-storage', () => {
  it('migrates, exits 0, and says there is nothing to do the second time', async () => {
    const group = `c${randomBytes(4).toString('hex')}.migration.example.com`;
    const seeded = await seedGadgets(client, { group, objects: 40 });
    const first = await run(['--kubeconfig', kubeconfig, '--crd', seeded.crdName, '--page-size', '15']);
    expect(first.code).toBe(0);
    expect(first.lines.at(-1)).toMatchObject({ name: 'migrate-storage', level: 'info', msg: 'migrated: every object is stored in v1', done: 40, rewritten: 40, storedVersions: ['v1'] });
    expect(server.listStored(group, 'gadgets').every((o) => o.apiVersion === `${group}/v1`)).toBe(true);
    expect(await seeded.storedVersions()).toEqual(['v1']);

    const second = await run(['--kubeconfig', kubeconfig, '--crd', seeded.crdName]);
    expect(second.code).toBe(0);
    expect(second.lines.map((l) => l['msg'])).toEqual(['status.storedVersions is already [v1]: nothing to migrate (--force rewrites anyway)']);
  });

  it('exits 1 naming the objects that were not rewritten, storedVersions untouched', async () => {
    const group = `c${randomBytes(4).toString('hex')}.migration.example.com`;
    const seeded = await seedGadgets(client, { group, objects: 10 });
    const fault = server.faults.add({ verb: 'update', resource: 'gadgets', name: 'g-4', code: 500, message: 'etcdserver: request timed out' });
    try {
      const result = await run(['--kubeconfig', kubeconfig, '--crd', seeded.crdName]);
      expect(result.code).toBe(1);
      expect(result.lines.at(-1)).toMatchObject({
        level: 'error', failed: 1,
        failures: ['gadgets-1/g-4: 500 Internal error occurred: etcdserver: request timed out'],
        msg: 'not migrated: 1 objects could not be rewritten (listed in failures); fix them and run again',
      });
    } finally {
      server.faults.remove(fault);
    }
    expect(await seeded.storedVersions()).toEqual(['v1alpha1', 'v1']);
  });

  it('exits 3 (incomplete) naming each object the server refuses as it is, with its fix; every other object rewritten, storedVersions untouched', async () => {
    const group = `c${randomBytes(4).toString('hex')}.migration.example.com`;
    // A server without validation ratcheting (Kubernetes 1.28/1.29): the no-op PUT of an object invalid in v1 answers 422.
    const strict = await startTestApiServer({ validationRatcheting: false });
    const strictClient = new KubeClient({ config: KubeConfig.fromKubeconfig(strict.kubeconfig()) });
    const strictConfig = join(dir, 'kubeconfig-strict');
    writeFileSync(strictConfig, strict.kubeconfig());
    try {
      const seeded = await seedGadgets(strictClient, { group, objects: 10, namespaces: 3 });
      await limitGadgetSize(seeded, group, 3);
      const result = await run(['--kubeconfig', strictConfig, '--crd', seeded.crdName]);
      expect(result.code).toBe(3);
      // g-4 … g-9 have sizes 4 … 9, over the new maximum of 3.
      expect(result.lines.filter((l) => l['msg'] === 'skipped: the server refuses to store it in v1 as it is; the run goes on').map((l) => l['name']).sort()).toEqual(['g-4', 'g-5', 'g-6', 'g-7', 'g-8', 'g-9']);
      expect(result.lines.find((l) => l['name'] === 'g-4')).toMatchObject({ level: 'warn', namespace: 'gadgets-1', code: 422, err: expect.stringMatching(/spec\.size/), fix: expect.stringContaining(`kubectl edit gadgets.${group} g-4 -n gadgets-1`) });
      const last = result.lines.at(-1)!;
      expect(last).toMatchObject({ level: 'error', skippedCount: 6, msg: 'incomplete: 6 objects skipped (listed in skipped, each with its fix), every other one rewritten; status.storedVersions left as it was: fix or delete them and run again' });
      expect((last['skipped'] as string[]).find((s) => s.startsWith('gadgets-1/g-4: 422 '))).toMatch(new RegExp(` — fix: make it valid for ${group.replace(/\./g, '\\.')}/v1 `));
      expect(strict.listStored(group, 'gadgets').filter((o) => o.apiVersion === `${group}/v1`)).toHaveLength(4);
      expect(await seeded.storedVersions()).toEqual(['v1alpha1', 'v1']);
    } finally {
      strictClient.close();
      await strict.stop();
    }
  });

  it('stops on SIGTERM with exit 1, storedVersions untouched', async () => {
    const group = `c${randomBytes(4).toString('hex')}.migration.example.com`;
    const seeded = await seedGadgets(client, { group, objects: 60 });
    const slow = server.faults.add({ verb: 'update', resource: 'gadgets', latencyMs: 40 });
    try {
      const result = await run(['--kubeconfig', kubeconfig, '--crd', seeded.crdName, '--concurrency', '2'], (child) => {
        // Once the first objects are rewritten: well before the last (60 at 2 × 25/s).
        const timer = setInterval(() => {
          if (server.listStored(group, 'gadgets').some((o) => o.apiVersion === `${group}/v1`)) {
            clearInterval(timer);
            child.kill('SIGTERM');
          }
        }, 10);
      });
      expect(result.code).toBe(1);
      expect(result.lines.map((l) => l['msg'])).toContain('stopped before every object was rewritten; status.storedVersions left as it was: run again to finish');
    } finally {
      server.faults.remove(slow);
    }
    expect(await seeded.storedVersions()).toEqual(['v1alpha1', 'v1']);
    expect(server.listStored(group, 'gadgets').filter((o) => o.apiVersion === `${group}/v1alpha1`).length).toBeGreaterThan(0);
  });

  it.each<[string, string[], RegExp]>([
    ['a CRD that does not exist', ['--crd', 'gadgets.nowhere.example.com'], /refused: CRD gadgets\.nowhere\.example\.com: not found/],
  ])('exits 2 for %s', async (_, args, message) => {
    const result = await run(['--kubeconfig', kubeconfig, ...args]);
    expect(result.code).toBe(2);
    expect(result.lines.at(-1)?.['msg']).toMatch(message);
  });

  it('exits 2 on a bad flag, naming it, and prints the help with exit 0', async () => {
    const bad = await run(['--concurrency', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --concurrency: expected an integer from 1 to 256, got "0"\n\nUsage: migrate-storage/);
    const help = await run(['--help']);
    expect(help.code).toBe(0);
  });
});
