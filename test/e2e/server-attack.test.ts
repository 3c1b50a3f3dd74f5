/**
 * The controller's servers under a connection flood (issue 41, HIGH 3): anyone who reaches a Pod's
 * ports may open connections. Against 0.3.0, 19,500 half-open connections took the controller from 91
 * to 272 MiB RSS (from a 182 MiB start, over the 320 MiB limit), and 1,500 clients that never read their
 * `/metrics` answer stayed open indefinitely. The controller bundle, with the image's V8 flags and the
 * webhook on, is flooded on its metrics, health and webhook ports by connection-flood.ts processes
 * (which never read); it must stay under the Deployment's memory limit with margin, close every flood
 * connection itself (its own socket count back to where it was), and keep answering probes and
 * reconciling. The peak RSS is the kernel's high-water mark (`VmHWM`), read before the process is stopped.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle, ControllerProcess, startCluster, waitFor, WEBHOOK_FLAG, type Cluster } from './harness.ts';
import type { FloodReport } from './connection-flood.ts';
import { memoryLimitBytes, mib, peakRssBytes } from './process-memory.ts';
import { api, readyOf, scheduleManifest } from './scenarios.ts';

const LIMIT = memoryLimitBytes();
/** The margin the peak must keep under the limit: a fifth of it. */
const MARGIN = 0.8;
const FLOOD = fileURLToPath(new URL('./connection-flood.ts', import.meta.url));
const TSX_LOADER = fileURLToPath(new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url));
/** Generous: the servers close what they hold within their timeouts (10 s, 30 s for the webhook's idle ones); the machine may be slow. */
const CLOSE_DEADLINE_MS = 120_000;

let cluster: Cluster;
let controller: ControllerProcess;
let ports: { metrics: number; health: number; webhook: number };
let baselineSockets: number;

/** Sockets the controller process has open now (its file descriptors that are sockets). */
function socketsOf(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) n++;
    } catch {
      // closed while listed
    }
  }
  return n;
}

/** Starts a flood process; resolves with what it established, and a way to stop it. */
async function flood(port: number, count: number, mode: 'silent' | 'no-read'): Promise<{ report: FloodReport; stop(): void }> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, FLOOD, '--port', String(port), '--count', String(count), '--mode', mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`connection-flood exited with ${code} before its report`)));
  });
  return { report: JSON.parse(line) as FloodReport, stop: () => void child.kill('SIGKILL') };
}

/** Waits until the controller holds no more sockets than before the flood (a few more for API watches); returns the most it held meanwhile. */
async function untilSocketsClosed(what: string): Promise<{ peak: number; ms: number }> {
  const pid = controller.child.pid ?? 0;
  const started = Date.now();
  let peak = 0;
  await waitFor(`${what}: the controller to close the flood's connections (it holds ${socketsOf(pid)} sockets, ${baselineSockets} before)`, () => {
    const now = socketsOf(pid);
    peak = Math.max(peak, now);
    return now <= baselineSockets + 10;
  }, CLOSE_DEADLINE_MS, 500);
  return { peak, ms: Date.now() - started };
}

/** The controller still probes healthy and converges a new schedule. */
async function stillWorking(name: string): Promise<void> {
  expect(controller.child.exitCode).toBeNull();
  const res = await fetch(`http://127.0.0.1:${ports.health}/healthz`, { signal: AbortSignal.timeout(10_000) });
  expect(res.status).toBe(200);
  const k = api(cluster.admin);
  await k.schedules.create(scheduleManifest('flooded', name) as never);
  await k.waitForReady('flooded', name, (s) => readyOf(s)?.status === 'True', 60_000);
}

beforeAll(async () => {
  const [bundle, started] = await Promise.all([buildBundle(), startCluster()]);
  cluster = started;
  controller = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--concurrency=4', '--log-level=info', WEBHOOK_FLAG]);
  const starting = await controller.waitForLog('the servers', (r) => r['msg'] === 'starting', 60_000);
  const webhook = await controller.waitForLog('the webhook to listen', (r) => r['msg'] === 'conversion webhook listening');
  ports = { metrics: Number(new URL(String(starting['metrics'])).port), health: Number(new URL(String(starting['health'])).port), webhook: Number(new URL(String(webhook['url'])).port) };
  await controller.waitForLog('workers to start', (r) => r['msg'] === 'starting workers');
  await api(cluster.admin).createNamespace('flooded');
  await stillWorking('before');
  baselineSockets = socketsOf(controller.child.pid ?? 0);
}, 120_000);

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

describe('the servers under a connection flood', () => {
  it('closes thousands of half-open connections on every port, stays under the memory limit and keeps working', async () => {
    const floods = await Promise.all([flood(ports.metrics, 6_000, 'silent'), flood(ports.health, 6_000, 'silent'), flood(ports.webhook, 6_000, 'silent')]);
    try {
      const { peak, ms } = await untilSocketsClosed('half-open connections');
      const hwm = peakRssBytes(controller.child.pid ?? 0);
      console.info(`half-open: ${floods.map((f) => f.report.established).join(' + ')} established (metrics, health, webhook); the controller held at most ${peak} sockets (${baselineSockets} before) and closed them within ${ms} ms of the flood; peak RSS ${mib(hwm)} MiB (limit ${mib(LIMIT)} MiB)`);
      expect(hwm).toBeLessThan(LIMIT * MARGIN);
      await stillWorking('after-half-open');
    } finally {
      for (const f of floods) f.stop();
    }
  }, 300_000);

  it('closes 1,500 connections that never read their /metrics answer, and keeps working', async () => {
    const f = await flood(ports.metrics, 1_500, 'no-read');
    try {
      const { peak, ms } = await untilSocketsClosed('clients that never read');
      const hwm = peakRssBytes(controller.child.pid ?? 0);
      console.info(`never reading /metrics: ${f.report.established} established; the controller held at most ${peak} sockets and closed them within ${ms} ms; peak RSS so far ${mib(hwm)} MiB`);
      expect(hwm).toBeLessThan(LIMIT * MARGIN);
      await stillWorking('after-no-read');
    } finally {
      f.stop();
    }
  }, 300_000);
});
