/**
 * `npm run image:lock`: pins the image's inputs in scripts/image/image.lock.json: for each Debian
 * package of scripts/image/image-spec.ts, the candidate version apt knows (`apt-cache show`: version,
 * pool file, size, SHA-256 from the archive's signed index), and the SHA-256 of the Node binary the
 * `node` devDependency installed. Run `apt-get update` first to pin the archive's current versions (a
 * security update is a new pin, and so a new image); commit the lock.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileSync } from 'node:fs';
import { sha256File } from './deb-fetch.ts';
import { formatImageLock, IMAGE_LOCK_PATH, parseImageLock, type ImageLock, type LockedDeb } from './image-lock.ts';
import { DEBIAN_PACKAGES, DEBIAN_RELEASE, NODE_BINARY_PACKAGE } from './image-spec.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Parses one deb822 paragraph (`Field: value`, continuation lines folded away). */
export function parseParagraph(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  let last: string | undefined;
  for (const line of text.split('\n')) {
    if (/^\s/.test(line) && last !== undefined) {
      fields.set(last, `${fields.get(last)}\n${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    last = line.slice(0, colon);
    fields.set(last, line.slice(colon + 1).trim());
  }
  return fields;
}

/** The candidate version of `name` as apt's index describes it. */
function candidate(name: string): LockedDeb {
  const text = execFileSync('apt-cache', ['show', '--no-all-versions', name], { encoding: 'utf8' });
  const fields = parseParagraph(text.split('\n\n')[0] ?? '');
  const need = (key: string): string => {
    const value = fields.get(key);
    if (value === undefined) throw new Error(`apt-cache show ${name}: no ${key} field`);
    return value;
  };
  // `Source: gcc-12 (12.2.0-14)` names a source version when it differs from the binary's.
  const source = (fields.get('Source') ?? name).split(' ')[0]!;
  return { name, version: need('Version'), architecture: need('Architecture'), source, filename: need('Filename'), size: Number(need('Size')), sha256: need('SHA256') };
}

const packages = DEBIAN_PACKAGES.map(candidate);
const nodePackageJson = createRequire(join(ROOT, 'node_modules', 'node', 'package.json')).resolve(`${NODE_BINARY_PACKAGE.name}/package.json`);
const { version } = (await import(nodePackageJson, { with: { type: 'json' } })).default as { version: string };
const lock: ImageLock = {
  debian: { release: `Debian ${DEBIAN_RELEASE.versionId} (${DEBIAN_RELEASE.codename})`, packages },
  node: { package: NODE_BINARY_PACKAGE.name, version, sha256: await sha256File(join(dirname(nodePackageJson), NODE_BINARY_PACKAGE.binary)) },
};
parseImageLock(JSON.parse(formatImageLock(lock)));
writeFileSync(IMAGE_LOCK_PATH, formatImageLock(lock));
for (const p of packages) console.log(`${p.name} ${p.version} ${p.sha256}`);
console.log(`${lock.node.package} ${lock.node.version} ${lock.node.sha256}`);
console.log(`wrote ${IMAGE_LOCK_PATH}`);
