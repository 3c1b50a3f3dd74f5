/**
 * The image's three layers, as lists of entries (scripts/image/tar-layer.ts writes them), ordered from
 * the one that changes least to the one that changes with every commit, so a registry and a node's
 * image cache keep the first two across releases:
 *
 * 1. base: the pinned Debian packages' files, plus what their maintainer scripts or distroless would
 *    add: the CA bundle, passwd/group with `nonroot`, nsswitch.conf, the home folders, and one
 *    `/var/lib/dpkg/status.d/<package>` control file per package (where scanners such as Trivy and
 *    Syft look for the packages of a distroless image; there is no dpkg database).
 * 2. node: the Node binary at /nodejs/bin/node and its LICENSE.
 * 3. app: the bundle (controller.mjs and chunks/), owned by root and read-only to the user running it.
 */
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { APP_DIR, CA_BUNDLE, IMAGE_UID, NODE_PATH } from './image-spec.ts';
import type { DebContents } from './deb-contents.ts';
import type { LayerEntry } from './tar-layer.ts';

/** A package name with what it unpacks to. */
export interface UnpackedDeb {
  readonly name: string;
  readonly contents: DebContents;
}

/** Two packages (or a package and the build) want different things at one path. */
export class LayerConflictError extends Error {
  constructor(path: string, first: string, second: string) {
    super(`/${path} comes from both ${first} and ${second}, differently`);
    this.name = 'LayerConflictError';
  }
}

const dir = (path: string, mode = 0o755, uid = 0): LayerEntry => ({ path, type: 'directory', mode, uid, gid: uid });
const file = (path: string, text: string | Buffer, mode = 0o644): LayerEntry => ({ path, type: 'file', mode, uid: 0, gid: 0, data: { bytes: Buffer.isBuffer(text) ? text : Buffer.from(text) } });
const rel = (absolute: string): string => absolute.replace(/^\//, '');

/** Collects entries by path; the same directory twice is one, anything else twice is a conflict. */
class Tree {
  readonly #entries = new Map<string, { entry: LayerEntry; from: string }>();

  add(entry: LayerEntry, from: string): void {
    const had = this.#entries.get(entry.path);
    if (had === undefined) {
      this.#entries.set(entry.path, { entry, from });
      return;
    }
    const same = had.entry.type === 'directory' && entry.type === 'directory' && had.entry.mode === entry.mode && had.entry.uid === entry.uid && had.entry.gid === entry.gid;
    if (!same) throw new LayerConflictError(entry.path, had.from, from);
  }

  /** The entries, with a 0755 root-owned directory for every parent nobody listed. */
  entries(): LayerEntry[] {
    const all = [...this.#entries.values()].map((e) => e.entry);
    for (const entry of all) {
      const parts = entry.path.split('/');
      for (let i = 1; i < parts.length; i++) {
        const parent = parts.slice(0, i).join('/');
        if (!this.#entries.has(parent)) this.#entries.set(parent, { entry: dir(parent), from: 'the build' });
      }
    }
    return [...this.#entries.values()].map((e) => e.entry);
  }

  get(path: string): LayerEntry | undefined {
    return this.#entries.get(path)?.entry;
  }
}

/** What `update-ca-certificates` writes with Debian's default configuration: every shipped certificate, by path. */
export function caBundle(debs: readonly UnpackedDeb[]): Buffer {
  const certs = debs
    .flatMap((d) => d.contents.entries)
    .filter((e) => e.type === 'file' && e.path.startsWith('usr/share/ca-certificates/') && e.path.endsWith('.crt'))
    .sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  if (certs.length === 0) throw new Error('no certificates under /usr/share/ca-certificates: is ca-certificates among the packages?');
  return Buffer.concat(certs.flatMap((c) => {
    const bytes = c.data !== undefined && 'bytes' in c.data ? c.data.bytes : Buffer.alloc(0);
    return bytes.at(-1) === 0x0a ? [bytes] : [bytes, Buffer.from('\n')];
  }));
}

/** dpkg's status stanza for a package: its control paragraph marked installed. */
function statusStanza(control: string): string {
  const lines = control.trimEnd().split('\n');
  const at = lines.findIndex((l) => l.startsWith('Package:'));
  lines.splice(at + 1, 0, 'Status: install ok installed');
  return `${lines.join('\n')}\n`;
}

/** The base layer: the packages' files and the build's own system files. */
export function baseLayer(debs: readonly UnpackedDeb[]): LayerEntry[] {
  const tree = new Tree();
  for (const deb of debs) for (const entry of deb.contents.entries) tree.add(entry, `package ${deb.name}`);
  const generated: LayerEntry[] = [
    file('etc/passwd', `root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:${IMAGE_UID}:${IMAGE_UID}:nonroot:/home/nonroot:/sbin/nologin\n`),
    file('etc/group', `root:x:0:\nnobody:x:65534:\nnonroot:x:${IMAGE_UID}:\n`),
    // glibc reads it for getaddrinfo (files before DNS, as Debian's default).
    file('etc/nsswitch.conf', 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\nethers: files\nrpc: files\n'),
    file(rel(CA_BUNDLE), caBundle(debs)),
    dir('tmp', 0o1777),
    dir('root', 0o700),
    dir('home'),
    dir('home/nonroot', 0o700, IMAGE_UID),
    ...debs.map((d) => file(`var/lib/dpkg/status.d/${d.name}`, statusStanza(d.contents.control))),
  ];
  for (const entry of generated) tree.add(entry, 'the build');
  return tree.entries();
}

/** The node layer: the binary (0755) and its LICENSE, which lists the licenses of what it bundles. */
export function nodeLayer(binary: string, license: string): LayerEntry[] {
  const tree = new Tree();
  tree.add({ path: rel(NODE_PATH), type: 'file', mode: 0o755, uid: 0, gid: 0, data: { file: binary, size: statSync(binary).size } }, 'the node package');
  // /nodejs/LICENSE, beside bin/ as in Node's release archives.
  tree.add({ path: join(dirname(dirname(rel(NODE_PATH))), 'LICENSE'), type: 'file', mode: 0o644, uid: 0, gid: 0, data: { file: license, size: statSync(license).size } }, 'the node package');
  return tree.entries();
}

/**
 * The app layer: every file under `bundleDir` (the bundle's entry file and chunks) at /app, 0644 and
 * root-owned whatever the checkout's umask and owner were.
 */
export function appLayer(bundleDir: string): LayerEntry[] {
  const tree = new Tree();
  const files = (readdirSync(bundleDir, { recursive: true, withFileTypes: true }) as { name: string; parentPath: string; isFile(): boolean; isDirectory(): boolean }[]);
  for (const f of files) {
    const path = join(rel(APP_DIR), relative(bundleDir, join(f.parentPath, f.name)));
    if (f.isDirectory()) tree.add(dir(path), 'the bundle');
    else if (f.isFile()) tree.add({ path, type: 'file', mode: 0o644, uid: 0, gid: 0, data: { file: join(f.parentPath, f.name), size: statSync(join(f.parentPath, f.name)).size } }, 'the bundle');
    else throw new Error(`${join(f.parentPath, f.name)}: the bundle holds something other than files and folders`);
  }
  if (!tree.get(join(rel(APP_DIR), 'controller.mjs'))) throw new Error(`${bundleDir}: no controller.mjs (the bundle's entry file)`);
  return tree.entries();
}
