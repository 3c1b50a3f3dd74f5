/**
 * `npm run bench:migration`: the storage-version migration at scale (target ≥ 1,000 objects/s). Seeds
 * `--objects` custom resources stored in v1alpha1 on the test API server (in this process), switches
 * the CRD's storage version to v1, then runs `migrate-storage` from the controller bundle as its own
 * process (what the image runs) and prints its rate, its CPU time, the final `status.storedVersions`,
 * and a check of the server's storage that every object is now encoded in v1.
 *
 * The server keeps 1,000,000 events of history, so a LIST's continue token outlives the run as it
 * does against etcd (compacted every 5 minutes); with the default 10,000 the pages expire mid-run and
 * the LIST starts over (the bench prints the relists).
 *
 *   npm run bench:migration -- [--objects 10000] [--concurrency 16] [--page-size 500]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeClient } from '../src/kube/kube-client.ts';
import { KubeConfig } from '../src/kube/kube-config.ts';
import { startTestApiServer } from '../test/apiserver/index.ts';
import { buildBundle } from '../test/e2e/harness.ts';
import { seedGadgets } from '../test/migration/two-version-crd.ts';
import { childrenCpuMs } from './child-cpu.ts';

const { values } = parseArgs({ options: { objects: { type: 'string', default: '10000' }, concurrency: { type: 'string', default: '16' }, 'page-size': { type: 'string', default: '500' } } });
const objects = Number(values.objects);
const group = 'bench.migration.example.com';

const [bundle, server] = await Promise.all([buildBundle(), startTestApiServer({ watchHistorySize: 1_000_000 })]);
const dir = mkdtempSync(join(tmpdir(), 'migration-bench-'));
const client = new KubeClient({ config: KubeConfig.fromKubeconfig(server.kubeconfig()) });
try {
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeconfig());
  const seedStarted = performance.now();
  const seeded = await seedGadgets(client, { group, objects, namespaces: 20 });
  console.log(`seeded ${objects} objects in v1alpha1 in ${Math.round(performance.now() - seedStarted)} ms; storedVersions ${JSON.stringify(await seeded.storedVersions())}`);

  const cpuBefore = childrenCpuMs();
  const started = performance.now();
  const child = spawn(process.execPath, [bundle, 'migrate-storage', '--kubeconfig', kubeconfig, '--crd', seeded.crdName, '--concurrency', values.concurrency, '--page-size', values['page-size']], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const wallMs = performance.now() - started;
  const cpuMs = childrenCpuMs() - cpuBefore;
  const lines = output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  for (const line of lines.filter((l) => l['msg'] === 'progress')) console.log(`  progress: ${String(line['done'])}/${String(line['known'])} at ${String(line['objectsPerSecond'])} objects/s`);
  const last = lines.at(-1) ?? {};
  const stored: Record<string, number> = {};
  for (const o of server.listStored(group, 'gadgets')) stored[o.apiVersion ?? ''] = (stored[o.apiVersion ?? ''] ?? 0) + 1;
  console.log(`migrate-storage exited ${code}: ${String(last['msg'])}`);
  console.log(`  ${String(last['done'])} objects (${String(last['rewritten'])} rewritten, ${String(last['relists'])} relists) in ${String(last['elapsedSeconds'])} s: ${String(last['objectsPerSecond'])} objects/s (process wall ${Math.round(wallMs)} ms, ${Math.round(objects / (wallMs / 1000))} objects/s with start-up; migrator CPU ${cpuMs} ms)`);
  console.log(`  status.storedVersions ${JSON.stringify(await seeded.storedVersions())}; stored objects by apiVersion ${JSON.stringify(stored)}`);
  if (code !== 0 || stored[`${group}/v1`] !== objects) process.exitCode = 1;
} finally {
  client.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
