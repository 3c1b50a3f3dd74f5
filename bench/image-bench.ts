/**
 * `npm run bench:image`: what the image costs. Prints one JSON line with
 *
 * - `build`: `npm run image`'s builder timed cold (an empty .deb cache: every pinned package fetched
 *   with apt-get download) and warm (the cache filled), `--repeat` times each, medians and all runs;
 * - `size`: the layers compressed (what a registry stores and a node pulls) and uncompressed, in MiB;
 * - `readyz`: from the start of the controller to the first 200 of its /readyz, against the test API
 *   server with dist/ and the example applied, as a plain process (the bundle with the image's V8
 *   flags) and as a container of the image (umoci unpack once, then runc run per start, run as the
 *   test suite runs it), alternating, `--repeat` times each; medians and all runs, in ms.
 *
 *   npm run bench:image                       # 3 builds each way, 7 starts each way
 *   npm run bench:image -- --repeat 5 --starts 11
 *
 * Needs root and Debian's umoci, runc, skopeo, docker-registry (test/image/shared-image.ts says so).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { buildImage } from '../scripts/image/build-image.ts';
import { OPERATOR_VERSION } from '../src/pure/image.ts';
import { buildBundle, ControllerProcess, startCluster, waitFor } from '../test/e2e/harness.ts';
import { Container, removeContainers } from '../test/image/container.ts';
import { controllerEnvironment, deploymentPod } from '../test/image/controller-pod.ts';
import { requireContainerTools, type SharedImage } from '../test/image/shared-image.ts';

const run = promisify(execFile);
const { values } = parseArgs({ options: { repeat: { type: 'string' }, starts: { type: 'string' } } });
const repeat = Number(values.repeat ?? 3);
const starts = Number(values.starts ?? 7);
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const MiB = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;

requireContainerTools();
const work = mkdtempSync(join(tmpdir(), 'bks-image-bench-'));
process.env['BKS_TEST_TMP'] = work;
try {
  const cold: number[] = [];
  const warm: number[] = [];
  let last: Awaited<ReturnType<typeof buildImage>> | undefined;
  for (let i = 0; i < repeat; i++) {
    const cacheDir = mkdtempSync(join(work, 'cache-'));
    for (const [times, label] of [[cold, 'cold'], [warm, 'warm']] as const) {
      const started = performance.now();
      last = await buildImage({ output: join(work, `layout-${label}-${i}`), cacheDir });
      times.push(Math.round(performance.now() - started));
    }
  }
  const image = last!;
  const size = { compressedMiB: MiB(image.layers.reduce((s, l) => s + l.size, 0)), uncompressedMiB: MiB(image.layers.reduce((s, l) => s + l.uncompressedSize, 0)), layers: image.layers.map((l) => ({ createdBy: l.createdBy.slice(0, 40), compressedMiB: MiB(l.size), uncompressedMiB: MiB(l.uncompressedSize) })) };

  const bundleDir = join(work, 'unpacked');
  await run('umoci', ['unpack', '--image', `${image.dir}:${OPERATOR_VERSION}`, bundleDir]);
  const shared: SharedImage = { layout: image.dir, tag: OPERATOR_VERSION, manifestDigest: image.manifest.digest, bundle: bundleDir, metafile: '', sourceDateEpoch: image.contents.sourceDateEpoch };
  const cluster = await startCluster({ examples: true });
  const bundle = await buildBundle();
  const environment = await controllerEnvironment(cluster);
  const plain: number[] = [];
  const container: number[] = [];
  /** ms from `start()` to the first 200 of /readyz; stops the replica after. */
  async function timeToReady(start: () => ControllerProcess & { halt(): Promise<unknown> }): Promise<number> {
    const began = performance.now();
    const replica = start();
    const record = await replica.waitForLog('the health server', (r) => r['msg'] === 'starting', 60_000);
    await waitFor('/readyz 200', () => fetch(`${String(record['health'])}/readyz`).then((r) => r.ok, () => false), 60_000, 5);
    const ms = Math.round(performance.now() - began);
    await replica.halt();
    return ms;
  }
  for (let i = 0; i < starts; i++) {
    plain.push(
      await timeToReady(() => {
        const p = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, ...(environment.args ?? [])]);
        return Object.assign(p, { halt: () => p.stop() });
      }),
    );
    container.push(
      await timeToReady(() => {
        const { pod, container: spec } = deploymentPod();
        const c = Container.start(shared, pod, spec, environment);
        return Object.assign(ControllerProcess.attach(c.child), { halt: () => c.stop() });
      }),
    );
  }
  await removeContainers();
  await cluster.stop();
  console.log(JSON.stringify({
    manifestDigest: image.manifest.digest,
    build: { coldMedianMs: median(cold), warmMedianMs: median(warm), coldMs: cold, warmMs: warm },
    size,
    readyz: { plainMedianMs: median(plain), containerMedianMs: median(container), plainMs: plain, containerMs: container },
  }));
} finally {
  rmSync(work, { recursive: true, force: true });
}
