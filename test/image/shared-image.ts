/**
 * The image the test run's container tests share: built once per `vitest run` from the working tree
 * (`npm run image`'s builder), then unpacked once with Debian's umoci. Test files run in separate
 * worker processes, so the first one to ask builds it under a lock folder in the run's scratch folder
 * (test/global-setup.ts) and the others wait for its result file; a failed build is reported to every
 * waiter.
 *
 * The container tools are required, never optional: without them (or without root, which runc and
 * umoci's unpack need) the tests fail saying how to get them; `.ci/run` installs them.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildImage } from '../../scripts/image/build-image.ts';
import { OPERATOR_VERSION } from '../../src/pure/image.ts';

const run = promisify(execFile);

/** The tools of the image tests, each with the Debian package that has it. */
export const CONTAINER_TOOLS: Readonly<Record<string, string>> = { umoci: 'umoci', runc: 'runc', skopeo: 'skopeo', 'docker-registry': 'docker-registry', 'dpkg-deb': 'dpkg', 'apt-get': 'apt', gzip: 'gzip' };

/** Throws naming what is missing (CI or not: the image tests never skip). */
export function requireContainerTools(): void {
  const missing = Object.entries(CONTAINER_TOOLS).filter(([tool]) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
  if (missing.length > 0) {
    throw new Error(`${missing.map(([t]) => t).join(', ')} not found: the image tests build an OCI image and run it with Debian's tools: \`sudo apt-get install -y --no-install-recommends ${[...new Set(missing.map(([, p]) => p))].join(' ')}\` (.ci/run does)`);
  }
  if (process.getuid?.() !== 0) throw new Error('the image tests run containers with runc and unpack images with umoci, which need root (CI runs as root)');
}

/** The built and unpacked image. */
export interface SharedImage {
  /** The OCI layout. */
  readonly layout: string;
  /** The tag the layout names the image by. */
  readonly tag: string;
  readonly manifestDigest: string;
  /** umoci's runtime bundle: `config.json` (the image config as a runtime spec) and `rootfs/`. */
  readonly bundle: string;
  /** esbuild's metafile of the image's bundle (for the SBOM), as a file. */
  readonly metafile: string;
  /** The time stamp of every file (the commit's time). */
  readonly sourceDateEpoch: number;
}

const DEADLINE_MS = 15 * 60_000;

async function buildAndUnpack(dir: string): Promise<SharedImage> {
  const layout = join(dir, 'layout');
  const image = await buildImage({ output: layout });
  const bundle = join(dir, 'bundle');
  const metafile = join(dir, 'metafile.json');
  writeFileSync(metafile, JSON.stringify(image.contents.metafile));
  await run('umoci', ['unpack', '--image', `${layout}:${OPERATOR_VERSION}`, bundle], { timeout: 300_000 });
  return {
    layout,
    tag: OPERATOR_VERSION,
    manifestDigest: image.manifest.digest,
    bundle,
    metafile,
    sourceDateEpoch: image.contents.sourceDateEpoch,
  };
}

let shared: Promise<SharedImage> | undefined;

/** The run's image: built by the first caller of the run, waited for by the others. */
export function sharedImage(): Promise<SharedImage> {
  shared ??= (async () => {
    requireContainerTools();
    const scratch = process.env['BKS_TEST_TMP'] ?? mkdtempSync(join(tmpdir(), 'bks-image-test-'));
    const dir = join(scratch, 'image');
    const done = join(scratch, 'image.json');
    const failed = join(scratch, 'image.error');
    let builder = false;
    try {
      mkdirSync(dir);
      builder = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (builder) {
      try {
        const image = await buildAndUnpack(dir);
        writeFileSync(done, JSON.stringify(image));
        return image;
      } catch (err) {
        writeFileSync(failed, (err as Error).stack ?? String(err));
        throw err;
      }
    }
    const deadline = Date.now() + DEADLINE_MS;
    while (Date.now() < deadline) {
      if (existsSync(done)) return JSON.parse(readFileSync(done, 'utf8')) as SharedImage;
      if (existsSync(failed)) throw new Error(`the shared image failed to build in another test file:\n${readFileSync(failed, 'utf8')}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`timed out after ${DEADLINE_MS / 60_000} min waiting for another test file to build the shared image in ${dir}`);
  })();
  return shared;
}
