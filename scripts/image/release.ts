/**
 * `npm run release -- --version X.Y.Z`: builds the image from a clean checkout of the commit and writes
 * release/X.Y.Z/:
 *
 *   backupschedule-operator-X.Y.Z.oci.tar   the image as an oci-archive (skopeo copy oci-archive:<file>:X.Y.Z docker://…)
 *   dist/                                   dist/ with every reference to this release's image pinned by digest
 *                                           (`…:X.Y.Z@sha256:…`): what GitOps users commit
 *   sbom.cdx.json                           CycloneDX SBOM of the image's npm and Debian parts (scripts/image/sbom.ts)
 *   CHANGELOG.md                            the release's section of CHANGELOG.md
 *   SHA256SUMS                              of the files above (`sha256sum -c SHA256SUMS`)
 *
 * Written beside the target and renamed onto it at the end; a release of the same commit is the same
 * bytes (the image is reproducible, the archive's entries sorted with the commit's time).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { OPERATOR_VERSION } from '../../src/pure/image.ts';
import { buildImage } from './build-image.ts';
import { IMAGE_REPOSITORY } from './image-spec.ts';
import { imageSbom, type SbomInputs } from './sbom.ts';
import { tarStream, type LayerEntry } from './tar-layer.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A release's input or state is not what a release needs; the message says what to do. */
export class ReleaseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReleaseError';
  }
}

/** The file name of the image archive of `version`. */
export const archiveName = (version: string): string => `backupschedule-operator-${version}.oci.tar`;

/** The section `## <version>` of a Keep-a-Changelog style file (up to the next `## `). */
export function changelogSection(changelog: string, version: string): string {
  const lines = changelog.split('\n');
  const heading = new RegExp(`^## \\[?${version.replace(/\./g, '\\.')}\\]?(\\s|$)`);
  const start = lines.findIndex((l) => heading.test(l));
  if (start === -1) throw new ReleaseError(`CHANGELOG.md has no section "## ${version}": write what the release changes first`);
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  return `${lines.slice(start, end === -1 ? undefined : end).join('\n').trimEnd()}\n`;
}

/** Every file under `dir`, relative, sorted. */
function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as { name: string; parentPath: string; isFile(): boolean }[])
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

/**
 * Copies dist/ to `target` with `<repository>:<version>` pinned to `<repository>:<version>@<digest>`.
 * Throws when dist/ names none, or names the repository under another tag (an image this release did
 * not build, which it cannot pin).
 */
export function pinDist(source: string, target: string, version: string, digest: string): number {
  const reference = new RegExp(`${IMAGE_REPOSITORY.replace(/[.]/g, '\\.')}:([\\w][\\w.-]*)(@sha256:[0-9a-f]{64})?`, 'g');
  let pinned = 0;
  for (const file of filesUnder(source)) {
    const text = readFileSync(join(source, file), 'utf8');
    const out = text.replace(reference, (whole, tag: string, atDigest: string | undefined) => {
      if (tag !== version) throw new ReleaseError(`dist/${file} names ${whole}, not this release's image (${IMAGE_REPOSITORY}:${version}): only the image this release builds can be pinned by digest`);
      if (atDigest !== undefined && atDigest !== `@${digest}`) throw new ReleaseError(`dist/${file} pins ${whole}, not the digest this build made (${digest})`);
      pinned++;
      return `${IMAGE_REPOSITORY}:${version}@${digest}`;
    });
    mkdirSync(dirname(join(target, file)), { recursive: true });
    writeFileSync(join(target, file), out);
  }
  if (pinned === 0) throw new ReleaseError(`dist/ names no ${IMAGE_REPOSITORY}:${version}: run \`npm run synth\``);
  return pinned;
}

/** Writes the OCI layout at `layout` as an oci-archive (a tar of the layout, entries sorted, times `mtime`). */
export async function writeOciArchive(layout: string, file: string, mtime: number): Promise<void> {
  const entries: LayerEntry[] = filesUnder(layout).map((path) => ({ path, type: 'file', mode: 0o644, uid: 0, gid: 0, data: { file: join(layout, path), size: statSync(join(layout, path)).size } }));
  const dirs = new Set(entries.flatMap((e) => e.path.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
  const all: LayerEntry[] = [...[...dirs].map((path): LayerEntry => ({ path, type: 'directory', mode: 0o755, uid: 0, gid: 0 })), ...entries];
  await pipeline(Readable.from(tarStream(all, mtime)), createWriteStream(file));
}

/** `sha256sum` lines for every file under `dir` (SHA256SUMS itself excepted). */
export function sha256Sums(dir: string): string {
  return filesUnder(dir)
    .filter((f) => f !== 'SHA256SUMS')
    .map((f) => `${createHash('sha256').update(readFileSync(join(dir, f))).digest('hex')}  ${f}\n`)
    .join('');
}

/** What {@link writeRelease} packs. */
export interface ReleaseInputs extends Omit<SbomInputs, 'version'> {
  readonly version: string;
  /** The built OCI layout. */
  readonly layout: string;
  readonly sourceDateEpoch: number;
  /** The release folder to write (replaced). */
  readonly target: string;
  /** @default the repository's dist/ */
  readonly distDir?: string;
  /** @default the repository's CHANGELOG.md */
  readonly changelog?: string;
}

/** Writes the release folder from a built image. */
export async function writeRelease(inputs: ReleaseInputs): Promise<void> {
  const section = changelogSection(readFileSync(inputs.changelog ?? join(ROOT, 'CHANGELOG.md'), 'utf8'), inputs.version);
  mkdirSync(dirname(inputs.target), { recursive: true });
  const partial = mkdtempSync(join(dirname(inputs.target), `.${basename(inputs.target)}.partial-`));
  chmodSync(partial, 0o755);
  try {
    pinDist(inputs.distDir ?? join(ROOT, 'dist'), join(partial, 'dist'), inputs.version, inputs.manifestDigest);
    await writeOciArchive(inputs.layout, join(partial, archiveName(inputs.version)), inputs.sourceDateEpoch);
    writeFileSync(join(partial, 'sbom.cdx.json'), await imageSbom(inputs));
    writeFileSync(join(partial, 'CHANGELOG.md'), section);
    writeFileSync(join(partial, 'SHA256SUMS'), sha256Sums(partial));
    if (existsSync(inputs.target)) rmSync(inputs.target, { recursive: true, force: true });
    renameSync(partial, inputs.target);
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
}

/** Checks `--version` against the release the code says it is. */
export function checkVersion(version: string | undefined): string {
  if (version === undefined || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) throw new ReleaseError(`--version: expected a release X.Y.Z, got ${JSON.stringify(version ?? '')}`);
  const pkg = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  if (version !== pkg || version !== OPERATOR_VERSION) throw new ReleaseError(`--version ${version}: this commit is release ${pkg} (package.json; src/pure/image.ts says ${OPERATOR_VERSION}): bump both and run \`npm run synth\` before releasing another version`);
  return version;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = performance.now();
  try {
    const { values } = parseArgs({ options: { version: { type: 'string' }, output: { type: 'string' } } });
    const version = checkVersion(values.version);
    const dirty = execFileSync('git', ['-C', ROOT, 'status', '--porcelain'], { encoding: 'utf8' }).trim();
    if (dirty !== '') throw new ReleaseError(`the working tree has changes not committed (the image's revision label names the commit):\n${dirty}`);
    const target = resolve(values.output ?? join(ROOT, 'release', version));
    mkdirSync(dirname(target), { recursive: true });
    const scratch = mkdtempSync(join(dirname(target), '.release-image-'));
    try {
      const image = await buildImage({ output: join(scratch, 'layout'), refName: version });
      await writeRelease({ version, layout: image.dir, manifestDigest: image.manifest.digest, metafile: image.contents.metafile, debs: image.contents.debs, node: image.contents.node, sourceDateEpoch: image.contents.sourceDateEpoch, target });
      console.log(`${target}: ${IMAGE_REPOSITORY}:${version}@${image.manifest.digest} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
      process.stdout.write(readFileSync(join(target, 'SHA256SUMS'), 'utf8'));
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(err instanceof ReleaseError ? 2 : 1);
  }
}
