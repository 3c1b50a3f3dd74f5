/**
 * What a .deb puts on a file system, read without installing it: `dpkg-deb --fsys-tarfile` decompresses
 * its data member (xz, zstd or gzip, whichever the package uses) to a tar, which the runner's strict tar
 * reader (src/backup/tar-reader.ts) parses; `dpkg-deb --field` prints its control paragraph. No
 * maintainer script runs: what they would do that the image needs (the CA bundle) the build does itself.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { TarReader } from '../../src/backup/tar-reader.ts';
import type { LayerEntry } from './tar-layer.ts';

const run = promisify(execFile);

/** A package's files and its control paragraph. */
export interface DebContents {
  /** Entries with paths relative to `/`; hard links resolved to copies of their target's bytes. */
  readonly entries: LayerEntry[];
  /** The control file (`Package: …`), ending with a newline. */
  readonly control: string;
}

/** `./usr/lib/` → `usr/lib`; `./` → '' (the root, which the layer does not list). */
const normalize = (name: string): string => name.replace(/^\.?\//, '').replace(/\/+$/, '');

/** Reads the files and control paragraph of the .deb at `path`. */
export async function debContents(path: string): Promise<DebContents> {
  const entries: LayerEntry[] = [];
  const bytesOf = new Map<string, Buffer>();
  const links: { path: string; target: string; mode: number; uid: number; gid: number }[] = [];
  let current: { path: string; chunks: Buffer[] } | undefined;
  const finishCurrent = (): void => {
    if (current) bytesOf.set(current.path, Buffer.concat(current.chunks));
    current = undefined;
  };
  const reader = new TarReader({
    entry(m) {
      finishCurrent();
      const entryPath = normalize(m.name);
      if (entryPath === '') return;
      if (m.segments.length > 0) throw new Error(`${path}: ${m.name} is a sparse file, which no Debian package ships`);
      if (m.type === 'link') {
        links.push({ path: entryPath, target: normalize(m.linkname ?? ''), mode: m.mode, uid: m.uid, gid: m.gid });
        return;
      }
      if (m.type === 'file') current = { path: entryPath, chunks: [] };
      entries.push({ path: entryPath, type: m.type, mode: m.mode & 0o7777, uid: m.uid, gid: m.gid, ...(m.linkname === undefined || m.type !== 'symlink' ? {} : { linkname: m.linkname }) });
    },
    data(chunk) {
      // The reader reuses no buffers, but copy: chunks may be views into a larger pipe read.
      current?.chunks.push(Buffer.from(chunk));
    },
  });
  const dpkg = spawn('dpkg-deb', ['--fsys-tarfile', path], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  dpkg.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve, reject) => {
    dpkg.once('error', (err) => reject(new Error(`cannot run dpkg-deb (Debian's dpkg package): ${err.message}`, { cause: err })));
    dpkg.once('close', resolve);
  });
  for await (const chunk of dpkg.stdout) reader.push(chunk as Buffer);
  const code = await exited;
  if (code !== 0) throw new Error(`dpkg-deb --fsys-tarfile ${path} exited with ${code}: ${stderr.trim()}`);
  reader.finish();
  finishCurrent();
  const withData = entries.map((e) => (e.type === 'file' ? { ...e, data: { bytes: bytesOf.get(e.path) ?? Buffer.alloc(0) } } : e));
  for (const link of links) {
    const bytes = bytesOf.get(link.target);
    if (bytes === undefined) throw new Error(`${path}: hard link ${link.path} names ${link.target}, which is not a file before it`);
    withData.push({ path: link.path, type: 'file', mode: link.mode & 0o7777, uid: link.uid, gid: link.gid, data: { bytes } });
  }
  const { stdout: control } = await run('dpkg-deb', ['--field', path], { maxBuffer: 1 << 20 });
  return { entries: withData, control: control.endsWith('\n') ? control : `${control}\n` };
}
