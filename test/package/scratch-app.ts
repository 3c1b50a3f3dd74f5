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
  name?: string;
  version?: string;
  resolved?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  inBundle?: boolean;
  dev?: boolean;
  [key: string]: unknown;
}

interface Lockfile {
  packages: Record<string, LockEntry>;
}

/**
 * The lock entries of `names` and everything they need, hoisted as in this repository's lockfile.
 * `aliases` installs a package under another name than the repository's (`typescript` from the entry
 * of `typescript-5`, an npm alias: the repository's own `typescript` is 7, without the compiler API
 * ts-jest and ts-node load).
 */
function closure(lock: Lockfile, names: readonly string[], aliases: Readonly<Record<string, string>>): Record<string, LockEntry> {
  const out: Record<string, LockEntry> = {};
  const entryAt = (path: string): LockEntry | undefined => {
    const top = path.startsWith('node_modules/') && path.indexOf('/node_modules/') < 0 ? aliases[path.slice('node_modules/'.length)] : undefined;
    return lock.packages[top === undefined ? path : `node_modules/${top}`];
  };
  const visit = (path: string): void => {
    if (out[path] !== undefined) return;
    const entry = entryAt(path);
    if (entry === undefined) throw new Error(`${path} is not in package-lock.json`);
    const { dev: _dev, devOptional: _devOptional, name: realName, ...kept } = entry;
    // An alias's entry names the real package, whose tarball it is.
    const name = typeof realName === 'string' ? realName : path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    out[path] = entry.inBundle === true ? kept : { ...kept, resolved: entry.resolved ?? `https://registry.npmjs.org/${name}/-/${basename(name)}-${entry.version ?? ''}.tgz` };
    // Bundled packages come inside their parent's tarball.
    for (const nested of Object.keys(lock.packages).filter((p) => p.startsWith(`${path}/node_modules/`))) visit(nested);
    const optional = entry.peerDependenciesMeta ?? {};
    const needs = [...Object.keys(entry.dependencies ?? {}), ...Object.keys(entry.peerDependencies ?? {}).filter((n) => optional[n]?.optional !== true)];
    // Platform packages (esbuild's, rollup's binaries) are optional dependencies; npm ci installs the
    // one of this platform, from the cache, and skips the others.
    const optionals = Object.keys(entry.optionalDependencies ?? {});
    for (const dep of [...needs, ...optionals]) {
      // Node's resolution: the nearest node_modules up the path that has it.
      let dir = path;
      for (;;) {
        const candidate = `${dir}/node_modules/${dep}`;
        if (entryAt(candidate) !== undefined) {
          visit(candidate);
          break;
        }
        const up = dir.lastIndexOf('/node_modules/');
        if (up < 0) {
          if (entryAt(`node_modules/${dep}`) !== undefined || !optionals.includes(dep)) visit(`node_modules/${dep}`);
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
 * tarball and on `alsoInstall` (e.g. cdk8s, constructs) at the versions locked in `repoRoot`, each
 * installed under its own name or, for a key of `aliases`, from the repository's package of that value.
 */
export function writeScratchProject(dir: string, repoRoot: string, tarball: string, alsoInstall: readonly string[], aliases: Readonly<Record<string, string>> = {}): void {
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as Lockfile;
  const ours = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as LockEntry & { name: string; bin?: Record<string, string>; engines?: Record<string, string> };
  const spec = `file:${tarball}`;
  const dependencies: Record<string, string> = { [ours.name]: spec };
  for (const name of alsoInstall) dependencies[name] = lock.packages[`node_modules/${aliases[name] ?? name}`]?.version ?? '*';
  const packages: Record<string, LockEntry> = {
    '': { name: 'consumer', dependencies },
    ...closure(lock, [...Object.keys(ours.dependencies ?? {}), ...alsoInstall], aliases),
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
