/** `npm run demo`: runs until stopped, and a controller that crashes leaves its log behind. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const TSX = `${root}node_modules/tsx/dist/cli.mjs`;

let demo: ChildProcess | undefined;
let logPath: string | undefined;

afterAll(() => {
  // tsx runs the script in a child process, which starts the controller: end the whole group.
  if (demo?.pid !== undefined && demo.exitCode === null) {
    try {
      process.kill(-demo.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  if (logPath) rmSync(dirname(logPath), { recursive: true, force: true });
});

describe('npm run demo', () => {
  it('keeps the log of a controller that crashed, and says where it is', async () => {
    demo = spawn(process.execPath, [TSX, 'scripts/demo.ts'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    demo.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    demo.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => demo?.once('exit', (code) => resolve(code)));
    const deadline = Date.now() + 60_000;
    while (!output.includes('Press Ctrl-C') && demo.exitCode === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(output).toContain('nightly-etcd is Ready');
    logPath = /Controller log: (\S+)/.exec(output)?.[1];
    const kubeconfig = /The controller's own kubeconfig \(its ServiceAccount token\): (\S+)/.exec(output)?.[1];
    expect(logPath).toBeDefined();
    expect(kubeconfig).toBeDefined();

    // The controller writes its log in 4 KiB blocks at least every 250 ms: let the first lines land.
    while (!readFileSync(logPath!, 'utf8').includes('"msg":"starting"') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    // The controller is the process started with the demo's controller kubeconfig.
    const pid = Number(execFileSync('pgrep', ['-f', `kubeconfig ${kubeconfig}`], { encoding: 'utf8' }).trim().split('\n')[0]);
    process.kill(pid, 'SIGKILL');

    expect(await exited).toBe(1);
    expect(output).toContain(`The controller's log is kept: ${logPath}`);
    expect(existsSync(logPath!)).toBe(true);
    expect(readFileSync(logPath!, 'utf8')).toMatch(/"msg":"starting"/);
  }, 90_000);
});
