/**
 * Benchmark of the test API server: creates/s of small ConfigMaps from concurrent keep-alive
 * clients, then the server's RSS with all of them stored, a full LIST and GETs/s.
 *
 *   npm run bench:apiserver -- [--objects 50000] [--concurrency 32]
 *
 * `APISERVER_NODE_FLAGS=--cpu-prof` profiles the server. The server runs in its own process (`test/apiserver/cli.ts`) so its RSS is measured alone.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { objects: { type: 'string', default: '50000' }, concurrency: { type: 'string', default: '32' } } });
const total = Number(values.objects);
const concurrency = Number(values.concurrency);

const dir = await mkdtemp(join(tmpdir(), 'apiserver-bench-'));
const kubeconfig = join(dir, 'kubeconfig');
// APISERVER_NODE_FLAGS (e.g. `--cpu-prof`) is passed to the server process for profiling.
const nodeFlags = (process.env['APISERVER_NODE_FLAGS'] ?? '').split(' ').filter((f) => f !== '');
const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', 'test/apiserver/cli.ts', '--port', '0', '--kubeconfig', kubeconfig, '--watch-history-size', '10000'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise<string>((resolve, reject) => {
  child.stdout.on('data', (d: Buffer) => {
    const m = /listening on (http:\/\/\S+?);/.exec(d.toString());
    if (m) resolve(m[1] as string);
  });
  child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
});
const token = /token: (\S+)/.exec(await readFile(kubeconfig, 'utf8'))?.[1] ?? '';
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
const { hostname, port } = new URL(url);

function call(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request({ hostname, port, method, path, agent, headers: { authorization: `Bearer ${token}`, ...(data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** utime+stime of a process in seconds (so the result holds on a machine shared with other work). */
async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMiB(pid: number): Promise<number> {
  return readFile(`/proc/${pid}/status`, 'utf8').then((s) => Number(/VmRSS:\s+(\d+)/.exec(s)?.[1] ?? 0) / 1024);
}

await call('POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
const rssBefore = await rssMiB(child.pid ?? 0);
let next = 0;
let failures = 0;
const cpuBefore = await cpuSeconds(child.pid ?? 0);
const started = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < total) {
      const i = next++;
      const res = await call('POST', '/api/v1/namespaces/bench/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, labels: { app: 'bench' } }, data: { key: `value-${i}` } });
      if (res.status !== 201) failures++;
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
const serverCpu = (await cpuSeconds(child.pid ?? 0)) - cpuBefore;
const rssAfter = await rssMiB(child.pid ?? 0);
const listStart = performance.now();
const list = await call('GET', '/api/v1/namespaces/bench/configmaps');
const listMs = performance.now() - listStart;
const items = (JSON.parse(list.text) as { items: unknown[] }).items.length;
let gets = 0;
const getStart = performance.now();
await Promise.all(Array.from({ length: concurrency }, async () => {
  while (gets < 10_000) {
    const i = gets++;
    await call('GET', `/api/v1/namespaces/bench/configmaps/cm-${i % total}`);
  }
}));
const getSeconds = (performance.now() - getStart) / 1000;

console.log(JSON.stringify({
  objects: total,
  concurrency,
  failures,
  createsPerSecond: Math.round(total / seconds),
  createSeconds: Number(seconds.toFixed(2)),
  serverCpuSeconds: Number(serverCpu.toFixed(2)),
  createsPerServerCpuSecond: Math.round(total / serverCpu),
  loadAverage: (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' '),
  serverRssMiBBefore: Math.round(rssBefore),
  serverRssMiBWithAllObjects: Math.round(rssAfter),
  listAllMs: Math.round(listMs),
  listedItems: items,
  getsPerSecond: Math.round(10_000 / getSeconds),
}, null, 2));
agent.destroy();
child.kill('SIGTERM');
