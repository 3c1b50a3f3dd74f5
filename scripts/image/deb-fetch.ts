/**
 * Gets each pinned Debian package's .deb and checks it against its pin: from the build's cache, else
 * apt's own cache (/var/cache/apt/archives), else `apt-get download <name>=<version>`. A file is used
 * only when its SHA-256 is the pinned one, wherever it came from; the cache is not trusted more than
 * the network. Nothing is installed: the build only reads the files.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import type { LockedDeb } from './image-lock.ts';

const run = promisify(execFile);

/** apt's download cache, where `apt-get install` leaves the files it fetched. */
export const APT_ARCHIVES = '/var/cache/apt/archives';

/** A pinned input (a .deb, the Node binary) is missing or is not what its pin says; names it. */
export class PinnedInputError extends Error {
  /** The package (or binary) at fault. */
  readonly input: string;
  constructor(input: string, message: string, options?: ErrorOptions) {
    super(`${input}: ${message}`, options);
    this.name = 'PinnedInputError';
    this.input = input;
  }
}

/** Lower-case hex SHA-256 of a file, streamed. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Options for {@link fetchDebs}. */
export interface FetchDebsOptions {
  /** Where fetched .debs are kept between builds. */
  readonly cacheDir: string;
  /** apt's cache to look in before downloading. @default /var/cache/apt/archives */
  readonly aptArchives?: string;
}

/** The label errors use for a package: `libc6 2.36-9+deb12u14`. */
const label = (deb: LockedDeb): string => `${deb.name} ${deb.version}`;

/** Downloads `deb` with apt into a fresh folder under `cacheDir`; resolves with the file's path there. */
async function aptDownload(deb: LockedDeb, cacheDir: string): Promise<string> {
  const dir = mkdtempSync(join(cacheDir, '.download-'));
  try {
    try {
      // Sandbox user root: apt's `_apt` user may not be able to write into a cache under a user's home.
      await run('apt-get', ['download', '-o', 'APT::Sandbox::User=root', `${deb.name}=${deb.version}`], { cwd: dir, timeout: 300_000 });
    } catch (err) {
      const stderr = String((err as { stderr?: string }).stderr ?? (err as Error).message).trim();
      throw new PinnedInputError(label(deb), `apt-get download failed: ${stderr}. If the archive no longer has this version, pin the current one with \`npm run image:lock\` (after \`apt-get update\`); if apt's package lists are older than the pin, run \`apt-get update\``, { cause: err });
    }
    const [file] = readdirSync(dir).filter((f) => f.endsWith('.deb'));
    if (file === undefined) throw new PinnedInputError(label(deb), 'apt-get download succeeded but wrote no .deb');
    const target = join(cacheDir, basename(deb.filename));
    renameSync(join(dir, file), target);
    return target;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The path of each pinned package's .deb, checked against its SHA-256, in the order given. Throws
 * {@link PinnedInputError} naming the package when it cannot be had or differs from its pin.
 */
export async function fetchDebs(debs: readonly LockedDeb[], options: FetchDebsOptions): Promise<string[]> {
  mkdirSync(options.cacheDir, { recursive: true });
  const archives = options.aptArchives ?? APT_ARCHIVES;
  const paths: string[] = [];
  // One at a time: apt-get holds a lock on its lists, and the files are small.
  for (const deb of debs) {
    const cached = join(options.cacheDir, basename(deb.filename));
    let path: string | undefined;
    for (const candidate of [cached, join(archives, basename(deb.filename))]) {
      if (!existsSync(candidate)) continue;
      if ((await sha256File(candidate)) === deb.sha256) {
        path = candidate;
        break;
      }
      // A damaged or substituted copy in our own cache is dropped and fetched again.
      if (candidate === cached) rmSync(cached, { force: true });
    }
    if (path === undefined) {
      path = await aptDownload(deb, options.cacheDir);
      const actual = await sha256File(path);
      if (actual !== deb.sha256) {
        rmSync(path, { force: true });
        throw new PinnedInputError(label(deb), `the downloaded .deb has sha256 ${actual}, the lock pins ${deb.sha256}: the archive serves other bytes under this version (a mirror problem or tampering); the build stops`);
      }
    }
    paths.push(path);
  }
  return paths;
}
