/**
 * The standalone server (`npm run apiserver -- --port <p> --kubeconfig <file>`): writes an admin
 * kubeconfig that kubectl and HTTP clients use, and runs until killed. Test-server mode only (a real
 * cluster is not started by the suite).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiClient, eventually, isRealCluster } from './harness.ts';
import { endpointFromKubeconfig } from './harness/kubeconfig.ts';

const root = join(import.meta.dirname, '..', '..');

describe.skipIf(isRealCluster)('standalone server (npm run apiserver; skipped on a real cluster)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-standalone-'));
  let child: ChildProcess | undefined;
  afterAll(async () => {
    if (child?.pid !== undefined && child.exitCode === null) {
      const exited = new Promise((r) => child?.once('exit', r));
      // The npm process group: npm → tsx → node.
      process.kill(-child.pid, 'SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    { args: ['--help'], status: 0, stream: 'stdout' as const, text: 'Usage: npm run apiserver -- [flags]' },
    { args: ['--bogus'], status: 2, stream: 'stderr' as const, text: "Unknown option '--bogus'" },
  ])('answers $args with exit $status and the list of flags, not a stack trace', ({ args, status, stream, text }) => {
    const run = spawnSync('npm', ['run', '--silent', 'apiserver', '--', ...args], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(status);
    expect(run[stream]).toContain(text);
    expect(run[stream]).toContain('--kubeconfig <value>');
    expect(run.stderr).not.toContain('    at ');
  });

  it('writes an admin kubeconfig that authenticates, and serves until killed', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    let output = '';
    child = spawn('npm', ['run', '--silent', 'apiserver', '--', '--port', '0', '--kubeconfig', kubeconfig], { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    await eventually(async () => (existsSync(kubeconfig) && readFileSync(kubeconfig, 'utf8').includes('server:') ? true : undefined), 20_000, 100).catch((err: unknown) => {
      throw new Error(`no kubeconfig written: ${String(err)}\n${output}`);
    });
    const api = new ApiClient(endpointFromKubeconfig(kubeconfig));
    try {
      const version = await eventually(async () => {
        const res = await api.get('/version');
        return res.status === 200 ? res : undefined;
      }, 10_000);
      expect(version.body).toHaveProperty('gitVersion');
      expect((await api.get('/api/v1/namespaces')).status).toBe(200);
      expect((await api.get('/api/v1/namespaces', { token: 'wrong' })).status).toBe(401);
      expect(child.exitCode).toBeNull();
    } finally {
      api.close();
    }
  });
});
