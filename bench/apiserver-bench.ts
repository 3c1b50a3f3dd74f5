/**
 * Benchmark of the test API server: creates/s of small ConfigMaps — the first 10 % from concurrent
 * node:http keep-alive clients (what tests use), the rest from a pipelining load generator (the
 * server's own throughput, plus its CPU time per create) — then the server's RSS with all of them
 * stored, a full LIST and GETs/s.
 *
 *   npm run bench:apiserver -- [--objects 50000] [--concurrency 32]
 *
 * `APISERVER_NODE_FLAGS=--cpu-prof` profiles the server. The server runs in its own process (`test/apiserver/cli.ts`) so its RSS is measured alone.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import * as netModule from 'node:net';
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

/**
 * A cheap load generator: raw keep-alive sockets with HTTP/1.1 pipelining (`depth` requests in
 * flight per connection), so the client costs far less CPU than the server it measures.
 */
function pipelinedCreates(from: number, to: number, connections: number, depth: number): Promise<number> {
  const { createConnection } = netModule;
  let next = from;
  let failed = 0;
  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const socket = createConnection({ host: hostname, port: Number(port) });
      let inFlight = 0;
      let buffer: Buffer = Buffer.alloc(0);
      const send = (): void => {
        while (inFlight < depth && next < to) {
          const i = next++;
          const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, labels: { app: 'bench' } }, data: { key: `value-${i}` } });
          socket.write(`POST /api/v1/namespaces/bench/configmaps HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
          inFlight++;
        }
        if (inFlight === 0) {
          socket.end();
          resolve();
        }
      };
      socket.on('data', (chunk: Buffer) => {
        buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
        for (;;) {
          const headerEnd = buffer.indexOf('\r\n\r\n');
          if (headerEnd < 0) break;
          const head = buffer.subarray(0, headerEnd).toString('latin1');
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
          if (buffer.length < headerEnd + 4 + length) break;
          if (!head.startsWith('HTTP/1.1 201')) failed++;
          buffer = buffer.subarray(headerEnd + 4 + length);
          inFlight--;
        }
        send();
      });
      socket.on('error', reject);
      socket.on('connect', send);
    });
  return Promise.all(Array.from({ length: connections }, one)).then(() => failed);
}

await call('POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
const rssBefore = await rssMiB(child.pid ?? 0);
// Phase 1: node:http clients (what tests use), for the first 10 % of the objects.
const httpCount = Math.floor(total / 10);
let next = 0;
let failures = 0;
const httpStarted = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < httpCount) {
      const i = next++;
      const res = await call('POST', '/api/v1/namespaces/bench/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, labels: { app: 'bench' } }, data: { key: `value-${i}` } });
      if (res.status !== 201) failures++;
    }
  }),
);
const httpSeconds = (performance.now() - httpStarted) / 1000;
// Phase 2: the rest through the pipelined load generator: the server's own throughput.
const cpuBefore = await cpuSeconds(child.pid ?? 0);
const started = performance.now();
failures += await pipelinedCreates(httpCount, total, 8, 16);
const seconds = (performance.now() - started) / 1000;
const serverCpu = (await cpuSeconds(child.pid ?? 0)) - cpuBefore;
const pipelinedCount = total - httpCount;
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
  createsPerSecondNodeHttpClients: Math.round(httpCount / httpSeconds),
  createsPerSecondPipelined: Math.round(pipelinedCount / seconds),
  serverCpuSecondsPipelined: Number(serverCpu.toFixed(2)),
  createsPerServerCpuSecond: Math.round(pipelinedCount / serverCpu),
  loadAverage: (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' '),
  serverRssMiBBefore: Math.round(rssBefore),
  serverRssMiBWithAllObjects: Math.round(rssAfter),
  listAllMs: Math.round(listMs),
  listedItems: items,
  getsPerSecond: Math.round(10_000 / getSeconds),
}, null, 2));
agent.destroy();
child.kill('SIGTERM');
