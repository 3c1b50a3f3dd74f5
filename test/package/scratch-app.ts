/**
 * A scratch consumer project that installs the packed tarball offline. `npm install --offline <tarball>`
 * needs the registry's package documents (packuments) to resolve version ranges, and `npm ci` (what CI
 * runs) caches only tarballs. So the scratch project gets a lockfile instead, written from this
 * repository's own: each package the tarball needs, at the version locked here, with its integrity and
 * registry URL. `npm ci --offline` then takes every tarball from the npm cache, by integrity.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  inBundle?: boolean;
  dev?: boolean;
  [key: string]: unknown;
}

interface Lockfile {
  packages: Record<string, LockEntry>;
}

/** The lock entries of `names` and everything they need, hoisted as in this repository's lockfile. */
function closure(lock: Lockfile, names: readonly string[]): Record<string, LockEntry> {
  const out: Record<string, LockEntry> = {};
  const visit = (path: string): void => {
    if (out[path] !== undefined) return;
    const entry = lock.packages[path];
    if (entry === undefined) throw new Error(`${path} is not in package-lock.json`);
    const { dev: _dev, ...kept } = entry;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    out[path] = entry.inBundle === true ? kept : { ...kept, resolved: entry.resolved ?? `https://registry.npmjs.org/${name}/-/${basename(name)}-${entry.version ?? ''}.tgz` };
    // Bundled packages come inside their parent's tarball.
    for (const nested of Object.keys(lock.packages).filter((p) => p.startsWith(`${path}/node_modules/`))) visit(nested);
    const optional = entry.peerDependenciesMeta ?? {};
    const needs = [...Object.keys(entry.dependencies ?? {}), ...Object.keys(entry.peerDependencies ?? {}).filter((n) => optional[n]?.optional !== true)];
    for (const dep of needs) {
      // Node's resolution: the nearest node_modules up the path that has it.
      let dir = path;
      for (;;) {
        const candidate = `${dir}/node_modules/${dep}`;
        if (lock.packages[candidate] !== undefined) {
          visit(candidate);
          break;
        }
        const up = dir.lastIndexOf('/node_modules/');
        if (up < 0) {
          visit(`node_modules/${dep}`);
          break;
        }
        dir = dir.slice(0, up);
      }
    }
  };
  for (const name of names) visit(`node_modules/${name}`);
  return out;
}

/**
 * Writes `package.json` and `package-lock.json` of a consumer project in `dir` that depends on the
 * tarball and on `alsoInstall` (e.g. cdk8s, constructs) at the versions locked in `repoRoot`.
 */
export function writeScratchProject(dir: string, repoRoot: string, tarball: string, alsoInstall: readonly string[]): void {
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as Lockfile;
  const ours = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as LockEntry & { name: string; bin?: Record<string, string>; engines?: Record<string, string> };
  const spec = `file:${tarball}`;
  const dependencies: Record<string, string> = { [ours.name]: spec };
  for (const name of alsoInstall) dependencies[name] = lock.packages[`node_modules/${name}`]?.version ?? '*';
  const packages: Record<string, LockEntry> = {
    '': { name: 'consumer', dependencies },
    ...closure(lock, [...Object.keys(ours.dependencies ?? {}), ...alsoInstall]),
    [`node_modules/${ours.name}`]: {
      version: ours.version,
      resolved: spec,
      integrity: `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`,
      dependencies: ours.dependencies ?? {},
      peerDependencies: ours.peerDependencies ?? {},
      peerDependenciesMeta: ours.peerDependenciesMeta ?? {},
      ...(ours.bin === undefined ? {} : { bin: ours.bin }),
      ...(ours.engines === undefined ? {} : { engines: ours.engines }),
    },
  };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies }, null, 2)}\n`);
  writeFileSync(join(dir, 'package-lock.json'), `${JSON.stringify({ name: 'consumer', lockfileVersion: 3, requires: true, packages }, null, 2)}\n`);
}
