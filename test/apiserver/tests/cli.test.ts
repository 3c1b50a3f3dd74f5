/**
 * The standalone server's options for clusters that do not keep what a client wrote:
 * `--drop-field`, `--mutate-field`, `--kubernetes-version`, and a malformed one refused with exit 2.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = join(import.meta.dirname, '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'apiserver-cli-'));
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const child of children) {
    if (child.pid === undefined || child.exitCode !== null) continue;
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(-child.pid, 'SIGTERM'); // the npm process group: npm → tsx → node
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
  }
  rmSync(dir, { recursive: true, force: true });
});

function run(args: string[]): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn('npm', ['run', '--silent', 'apiserver', '--', '--port', '0', ...args], { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  children.push(child);
  return { child, output: () => output };
}

async function until<T>(probe: () => T | undefined, timeoutMs: number): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const value = probe();
    if (value !== undefined) return value;
  }
  throw new Error(`timed out after ${timeoutMs} ms`);
}

describe('npm run apiserver', () => {
  it('drops, rewrites and reports what the flags say', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    const server = run(['--kubeconfig', kubeconfig, '--drop-field', 'batch/cronjobs:spec.timeZone', '--mutate-field', 'batch/cronjobs:spec.suspend=true', '--kubernetes-version', '1.24.17']);
    const config = await until(() => (existsSync(kubeconfig) && readFileSync(kubeconfig, 'utf8').includes('token:') ? parse(readFileSync(kubeconfig, 'utf8')) : undefined), 20_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${server.output()}`);
    });
    const url = String(config.clusters[0].cluster.server).replace('https://', 'http://');
    const headers = { authorization: `Bearer ${config.users[0].user.token}`, 'content-type': 'application/json' };
    expect(await (await fetch(`${url}/version`, { headers })).json()).toMatchObject({ minor: '24', gitVersion: 'v1.24.17' });
    await fetch(`${url}/api/v1/namespaces`, { method: 'POST', headers, body: JSON.stringify({ metadata: { name: 'ns' } }) });
    const cronJob = {
      metadata: { name: 'c' },
      spec: { schedule: '0 2 * * *', timeZone: 'Etc/UTC', suspend: false, jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } },
    };
    const res = await fetch(`${url}/apis/batch/v1/namespaces/ns/cronjobs`, { method: 'POST', headers, body: JSON.stringify(cronJob) });
    const created = (await res.json()) as { spec: Record<string, unknown> };
    expect(res.status).toBe(201);
    expect(created.spec['timeZone']).toBeUndefined();
    expect(created.spec['suspend']).toBe(true);
  }, 40_000);

  it('refuses a malformed --drop-field with exit code 2, naming it', async () => {
    const bad = run(['--drop-field', 'spec.timeZone']);
    const code = await new Promise<number | null>((r) => bad.child.once('exit', r));
    expect(code).toBe(2);
    expect(bad.output()).toContain('field spec "spec.timeZone": expected <group>/<resource>:<path>');
  }, 40_000);
});
