/**
 * `npm run image -- --output DIR`: the operator image as an OCI image layout, built without a container
 * daemon from the esbuild bundle (scripts/bundle.ts), the Node binary of the `node` devDependency and the
 * Debian packages pinned in scripts/image/image.lock.json (scripts/image/image-spec.ts says what the
 * image is). Reproducible: two builds of one commit give the same manifest digest, wherever and
 * whenever they run (every time stamp is the commit's, docs/image.md says what else is fixed).
 *
 * The layout is written next to DIR and renamed onto it at the end: a failed build leaves DIR as it was.
 *
 *   npm run image -- --output build/image                 # OCI layout; prints the manifest digest
 *   npm run image -- --rootfs /rootfs                      # the files alone (the Dockerfile's build stage)
 *   flags: --revision <sha> --source-date-epoch <s>        # default: git HEAD and its commit time
 *          --lock <file> --cache-dir <dir>                 # default: the repository's lock; node_modules/.cache
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Metafile } from 'esbuild';
import { bundleController } from '../bundle.ts';
import { OPERATOR_VERSION } from '../../src/pure/image.ts';
import { debContents } from './deb-contents.ts';
import { fetchDebs, PinnedInputError, sha256File } from './deb-fetch.ts';
import { appLayer, baseLayer, nodeLayer } from './image-layers.ts';
import { IMAGE_LOCK_PATH, pinnedPackages, readImageLock, type LockedDeb, type LockedNode } from './image-lock.ts';
import { DEBIAN_PACKAGES, imageLabels, NODE_BINARY_PACKAGE } from './image-spec.ts';
import { writeRootfs } from './materialize.ts';
import { blobsDir, writeLayout, type Descriptor, type HistoryLayer } from './oci-layout.ts';
import { writeLayer, type LayerEntry } from './tar-layer.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Where fetched .debs are kept between builds. */
export const DEFAULT_CACHE_DIR = join(ROOT, 'node_modules', '.cache', 'backupschedule-image');

/** What the image is built from, beyond the files of the checkout. */
export interface BuildInputs {
  /** The commit (the `revision` label). @default `git rev-parse HEAD` */
  readonly revision?: string;
  /** Seconds since the epoch for every time stamp. @default $SOURCE_DATE_EPOCH, else the commit's time */
  readonly sourceDateEpoch?: number;
  /** The lock file. @default scripts/image/image.lock.json */
  readonly lockFile?: string;
  /** Where fetched .debs are kept. @default node_modules/.cache/backupschedule-image */
  readonly cacheDir?: string;
}

/** The files of the image, before they become layers. */
export interface ImageContents {
  readonly layers: readonly { readonly createdBy: string; readonly entries: readonly LayerEntry[] }[];
  readonly debs: readonly LockedDeb[];
  readonly node: LockedNode;
  /** esbuild's metafile of the bundle (which npm packages it holds). */
  readonly metafile: Metafile;
  readonly revision: string;
  readonly sourceDateEpoch: number;
  /** Removes the temporary bundle the entries point at. */
  dispose(): void;
}

/** A built OCI layout. */
export interface BuiltImage {
  readonly dir: string;
  readonly manifest: Descriptor;
  readonly layers: readonly HistoryLayer[];
  readonly contents: Omit<ImageContents, 'layers' | 'dispose'>;
}

function git(args: readonly string[]): string {
  try {
    return execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (err) {
    throw new Error(`git ${args.join(' ')} failed in ${ROOT} (not a git checkout? give --revision and --source-date-epoch or SOURCE_DATE_EPOCH; to docker build: --build-arg REVISION=… --build-arg SOURCE_DATE_EPOCH=…): ${(err as Error).message}`, { cause: err });
  }
}

/** The commit and time the build stamps into the image. */
export function buildStamp(inputs: Pick<BuildInputs, 'revision' | 'sourceDateEpoch'>, env: NodeJS.ProcessEnv = process.env): { revision: string; sourceDateEpoch: number } {
  const fromEnv = env['SOURCE_DATE_EPOCH'];
  const epoch = inputs.sourceDateEpoch ?? (fromEnv !== undefined && fromEnv !== '' ? Number(fromEnv) : Number(git(['log', '-1', '--format=%ct'])));
  if (!Number.isSafeInteger(epoch) || epoch < 0) throw new Error(`--source-date-epoch / SOURCE_DATE_EPOCH: expected whole seconds since 1970, got ${JSON.stringify(inputs.sourceDateEpoch ?? fromEnv)}`);
  const revision = inputs.revision ?? git(['rev-parse', 'HEAD']);
  if (!/^[0-9a-f]{7,64}$/.test(revision)) throw new Error(`--revision: expected a git commit id, got ${JSON.stringify(revision)}`);
  return { revision, sourceDateEpoch: epoch };
}

/** The Node binary the `node` devDependency installed, checked against its pin. */
async function pinnedNode(pin: LockedNode): Promise<{ binary: string; license: string }> {
  const label = `${pin.package} ${pin.version}`;
  let packageJson: string;
  try {
    packageJson = createRequire(join(ROOT, 'node_modules', 'node', 'package.json')).resolve(`${NODE_BINARY_PACKAGE.name}/package.json`);
  } catch (err) {
    // The `node` package's install script fetches it with `npm install --no-save`: package-lock.json does
    // not list it, so a later `npm install` of anything prunes it.
    throw new PinnedInputError(label, 'not installed: the `node` devDependency installs it; run `npm rebuild node` (an `npm install` prunes it, and `npm ci --ignore-scripts` skips it)', { cause: err });
  }
  const installed = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;
  if (pin.package !== NODE_BINARY_PACKAGE.name || installed !== pin.version) throw new PinnedInputError(label, `the lock pins it, but ${NODE_BINARY_PACKAGE.name} ${installed} is installed: run \`npm run image:lock\` after changing the node devDependency`);
  const binary = join(dirname(packageJson), NODE_BINARY_PACKAGE.binary);
  const actual = await sha256File(binary);
  if (actual !== pin.sha256) throw new PinnedInputError(label, `${binary} has sha256 ${actual}, the lock pins ${pin.sha256}`);
  return { binary, license: join(dirname(packageJson), NODE_BINARY_PACKAGE.license) };
}

/** Gathers the image's files: bundles, fetches and checks the pinned inputs, unpacks the packages. */
export async function imageContents(inputs: BuildInputs = {}): Promise<ImageContents> {
  const stamp = buildStamp(inputs);
  const lock = readImageLock(inputs.lockFile ?? IMAGE_LOCK_PATH);
  const debs = pinnedPackages(lock, DEBIAN_PACKAGES);
  const bundleDir = mkdtempSync(join(tmpdir(), 'bks-image-bundle-'));
  try {
    // Pinned inputs first: a bad pin fails in a second, before the bundle is made.
    const debFiles = await fetchDebs(debs, { cacheDir: join(inputs.cacheDir ?? DEFAULT_CACHE_DIR, 'debs') });
    const node = await pinnedNode(lock.node);
    const bundle = await bundleController({ outfile: join(bundleDir, 'controller.mjs'), metafile: true });
    const unpacked = await Promise.all(debs.map(async (deb, i) => ({ name: deb.name, contents: await debContents(debFiles[i]!) })));
    return {
      layers: [
        { createdBy: `${lock.debian.release}: ${debs.map((d) => `${d.name} ${d.version}`).join(', ')}; passwd, group, CA bundle (scripts/image)`, entries: baseLayer(unpacked) },
        { createdBy: `Node.js ${lock.node.version} (npm ${lock.node.package})`, entries: nodeLayer(node.binary, node.license) },
        { createdBy: 'the controller bundle (scripts/bundle.ts)', entries: appLayer(bundleDir) },
      ],
      debs,
      node: lock.node,
      metafile: bundle.metafile!,
      ...stamp,
      dispose: () => rmSync(bundleDir, { recursive: true, force: true }),
    };
  } catch (err) {
    rmSync(bundleDir, { recursive: true, force: true });
    throw err;
  }
}

/** A fresh folder beside `target` (same file system, so it can be renamed onto it). */
function besides(target: string): string {
  mkdirSync(dirname(target), { recursive: true });
  const dir = mkdtempSync(join(dirname(target), `.${basename(target)}.partial-`));
  chmodSync(dir, 0o755);
  return dir;
}

/** Puts the finished `partial` in place of `target` (replacing an older build there). */
function replace(partial: string, target: string): void {
  if (!existsSync(target)) {
    renameSync(partial, target);
    return;
  }
  const old = `${partial}.old`;
  renameSync(target, old);
  renameSync(partial, target);
  rmSync(old, { recursive: true, force: true });
}

/** Options for {@link buildImage}. */
export interface BuildImageOptions extends BuildInputs {
  /** The OCI layout folder to write (replaced on success, untouched on failure). */
  readonly output: string;
  /** The tag the layout's index names the image by. @default this release's version */
  readonly refName?: string;
}

/** Builds the OCI layout. */
export async function buildImage(options: BuildImageOptions): Promise<BuiltImage> {
  const output = resolve(options.output);
  const partial = besides(output);
  let contents: ImageContents | undefined;
  try {
    contents = await imageContents(options);
    mkdirSync(blobsDir(partial), { recursive: true });
    const { sourceDateEpoch } = contents;
    const layers = await Promise.all(
      contents.layers.map(async (layer, i) => {
        const file = join(blobsDir(partial), `.layer-${i}`);
        const written = await writeLayer(layer.entries, sourceDateEpoch, file);
        renameSync(file, join(blobsDir(partial), written.digest.replace('sha256:', '')));
        return { ...written, createdBy: layer.createdBy };
      }),
    );
    const created = new Date(sourceDateEpoch * 1000).toISOString().replace('.000Z', 'Z');
    const labels = imageLabels({ revision: contents.revision, created });
    const manifest = writeLayout(partial, layers, labels, created, options.refName ?? OPERATOR_VERSION);
    replace(partial, output);
    const { layers: _, dispose: __, ...rest } = contents;
    return { dir: output, manifest, layers, contents: rest };
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  } finally {
    contents?.dispose();
  }
}

/** Writes the image's files into `dir` (one tree, the layers in order): the Dockerfile copies it onto `scratch`. */
export async function buildRootfs(dir: string, inputs: BuildInputs = {}): Promise<void> {
  const target = resolve(dir);
  const partial = besides(target);
  let contents: ImageContents | undefined;
  try {
    contents = await imageContents(inputs);
    writeRootfs(contents.layers.flatMap((l) => l.entries), partial, contents.sourceDateEpoch);
    replace(partial, target);
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  } finally {
    contents?.dispose();
  }
}

const MiB = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: { output: { type: 'string' }, rootfs: { type: 'string' }, revision: { type: 'string' }, 'source-date-epoch': { type: 'string' }, lock: { type: 'string' }, 'cache-dir': { type: 'string' } },
  });
  const inputs: BuildInputs = {
    ...(values.revision === undefined ? {} : { revision: values.revision }),
    ...(values['source-date-epoch'] === undefined ? {} : { sourceDateEpoch: Number(values['source-date-epoch']) }),
    ...(values.lock === undefined ? {} : { lockFile: resolve(values.lock) }),
    ...(values['cache-dir'] === undefined ? {} : { cacheDir: resolve(values['cache-dir']) }),
  };
  if (values['source-date-epoch'] !== undefined && !/^\d+$/.test(values['source-date-epoch'])) {
    process.stderr.write(`error: --source-date-epoch: expected whole seconds since 1970, got ${JSON.stringify(values['source-date-epoch'])}\n`);
    process.exit(2);
  }
  if ((values.output === undefined) === (values.rootfs === undefined)) {
    process.stderr.write('usage: npm run image -- --output <dir> | --rootfs <dir> [--revision <sha>] [--source-date-epoch <s>] [--lock <file>] [--cache-dir <dir>]\n');
    process.exit(2);
  }
  const started = performance.now();
  try {
    if (values.rootfs !== undefined) {
      await buildRootfs(values.rootfs, inputs);
      console.log(`wrote the image's files to ${values.rootfs} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } else {
      const image = await buildImage({ ...inputs, output: values.output! });
      const compressed = image.layers.reduce((s, l) => s + l.size, 0);
      const uncompressed = image.layers.reduce((s, l) => s + l.uncompressedSize, 0);
      console.log(`${image.dir}: ${image.manifest.digest}`);
      console.log(`  ${image.layers.length} layers, ${MiB(compressed)} compressed, ${MiB(uncompressed)} uncompressed; revision ${image.contents.revision}; ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
