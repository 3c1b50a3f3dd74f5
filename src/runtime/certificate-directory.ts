/**
 * Serving credentials read from a directory of PEM files, `tls.crt`, `tls.key` and optionally `ca.crt`,
 * as kubelet projects a Secret volume (the Secret cert-manager writes) or as anyone writes them by hand,
 * and read again whenever they change, without a restart.
 *
 * Why polling rather than a watch (`fs.watch`, inotify): kubelet updates a Secret volume by writing a new
 * hidden `..<timestamp>` directory and swapping the `..data` symlink to it with a rename; `tls.crt` is a
 * symlink to `..data/tls.crt`. A watch on the files follows inodes that the swap replaces, so it goes
 * silent after the first rotation; a watch on the directory sees the rename but inotify is unreliable on
 * some volume types (overlay and network filesystems) and drops events when its queue overflows.
 * controller-runtime's certwatcher and Elastic's operator both replaced fsnotify with polling for these
 * reasons (controller-runtime#3020, elastic/cloud-on-k8s#493). Reading three small files every few
 * seconds costs nothing, always converges, and kubelet itself takes up to a minute or more to project a
 * renewed Secret, so a 5 s poll adds little delay.
 *
 * Consistency: when `..data` exists, its target is resolved first and every file is read from that one
 * timestamped directory, so a swap between two reads cannot pair the new certificate with the old key
 * (the directory of an old generation may vanish mid-read: that read fails and the next poll succeeds).
 * Whatever the writer, a pair is loaded only when the key belongs to the certificate and the certificate
 * has not expired; otherwise the credentials served so far stay, and the problem is logged and reported.
 */
import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { realClock, type Clock } from './clock.ts';
import type { ServingCredentials } from './certificate-manager.ts';
import type { Logger } from './logger.ts';
import { PeriodicSync } from './periodic-sync.ts';
import { checkKeyMatches, readCertificate } from './tls-certificates.ts';

/** The file names in the directory: those of a `kubernetes.io/tls` Secret as cert-manager fills it. */
export const CERTIFICATE_FILES = { cert: 'tls.crt', key: 'tls.key', ca: 'ca.crt' } as const;

/** The symlink kubelet swaps atomically to publish a new version of a projected volume. */
const KUBELET_DATA_LINK = '..data';

/** Options of {@link CertificateDirectory}. */
export interface CertificateDirectoryOptions {
  /** The directory holding `tls.crt`, `tls.key` and (optionally) `ca.crt`. */
  readonly dir: string;
  /** Called with every new, valid certificate and key (the first time once one is read). */
  onCredentials(credentials: ServingCredentials): void;
  /** How often the files are read again. @default 5_000 */
  readonly pollMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  readonly logger: Pick<Logger, 'info' | 'warn'>;
}

/** What one read of the directory found. */
type DirectoryRead = { readonly ok: true; readonly credentials: ServingCredentials; readonly notAfter: number; readonly fingerprint: string } | { readonly ok: false; readonly problem: string };

/** See the module doc. */
export class CertificateDirectory extends PeriodicSync {
  readonly #o: CertificateDirectoryOptions;
  readonly #clock: Clock;
  #loaded: { readonly credentials: ServingCredentials; readonly notAfter: number; readonly fingerprint: string } | undefined;
  /** The last read's problem, logged once until it changes. */
  #readProblem: string | undefined;

  constructor(options: CertificateDirectoryOptions) {
    if (options.dir === '') throw new TypeError('CertificateDirectory: dir must not be empty');
    const clock = options.clock ?? realClock;
    super(clock);
    this.#o = options;
    this.#clock = clock;
  }

  /** The credentials served now, while they are valid (undefined once the loaded certificate expired). */
  get credentials(): ServingCredentials | undefined {
    return this.#loaded && this.#loaded.notAfter > this.#clock.now() ? this.#loaded.credentials : undefined;
  }

  /** Why no valid certificate is served, for the readiness check; undefined while one is. */
  get problem(): string | undefined {
    if (this.credentials) return undefined;
    if (this.#loaded) return `the serving certificate from ${this.#o.dir} expired at ${new Date(this.#loaded.notAfter).toISOString()}${this.#readProblem ? ` (${this.#readProblem})` : ''}`;
    return `no valid serving certificate loaded from ${this.#o.dir} yet${this.#readProblem ? `: ${this.#readProblem}` : ''}`;
  }

  /** One poll (`sync()` runs one now): loads the files when they changed and are valid. */
  protected override async runOnce(): Promise<number> {
    const read = await this.#read();
    if (read.ok) this.#load(read);
    else this.#report(read.problem);
    return this.#o.pollMs ?? 5_000;
  }

  /** Reads the files; once more at once when that failed, in case kubelet removed the generation mid-read. */
  async #read(): Promise<DirectoryRead> {
    const first = await this.#readOnce();
    return first.ok || !first.retry ? first : this.#readOnce();
  }

  async #readOnce(): Promise<DirectoryRead & { readonly retry?: boolean }> {
    let certPem: string;
    let keyPem: string;
    let caPem: string;
    try {
      // kubelet's layout: read every file from the one generation `..data` points at now.
      const dir = await realpath(join(this.#o.dir, KUBELET_DATA_LINK)).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return this.#o.dir;
        throw err;
      });
      // Both settled, the certificate's failure first: whichever read failed sooner must not change the
      // problem from poll to poll (each change is logged again).
      const [cert, key] = await Promise.allSettled([readFile(join(dir, CERTIFICATE_FILES.cert), 'utf8'), readFile(join(dir, CERTIFICATE_FILES.key), 'utf8')]);
      if (cert.status === 'rejected') throw cert.reason;
      if (key.status === 'rejected') throw key.reason;
      [certPem, keyPem] = [cert.value, key.value];
      caPem = await readFile(join(dir, CERTIFICATE_FILES.ca), 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return '';
        throw err;
      });
    } catch (err) {
      return { ok: false, retry: true, problem: `cannot read ${CERTIFICATE_FILES.cert} and ${CERTIFICATE_FILES.key} in ${this.#o.dir}: ${(err as Error).message}` };
    }
    if (this.#loaded && certPem === this.#loaded.credentials.certPem && keyPem === this.#loaded.credentials.keyPem && caPem === this.#loaded.credentials.caBundlePem) {
      return { ok: true, credentials: this.#loaded.credentials, notAfter: this.#loaded.notAfter, fingerprint: this.#loaded.fingerprint };
    }
    try {
      checkKeyMatches({ certPem, keyPem }, join(this.#o.dir, CERTIFICATE_FILES.cert));
      const info = readCertificate(certPem, join(this.#o.dir, CERTIFICATE_FILES.cert));
      if (info.notAfter <= this.#clock.now()) return { ok: false, problem: `${CERTIFICATE_FILES.cert} expired at ${new Date(info.notAfter).toISOString()}` };
      return { ok: true, credentials: { certPem, keyPem, caBundlePem: caPem }, notAfter: info.notAfter, fingerprint: info.fingerprint256 };
    } catch (err) {
      return { ok: false, problem: (err as Error).message };
    }
  }

  #load(read: DirectoryRead & { ok: true }): void {
    if (read.credentials !== this.#loaded?.credentials) {
      try {
        this.#o.onCredentials(read.credentials);
      } catch (err) {
        this.#report(`the server refused ${CERTIFICATE_FILES.cert}/${CERTIFICATE_FILES.key}: ${(err as Error).message}`);
        return;
      }
      this.#loaded = { credentials: read.credentials, notAfter: read.notAfter, fingerprint: read.fingerprint };
      this.#o.logger.info({ dir: this.#o.dir, notAfter: new Date(read.notAfter).toISOString(), fingerprint: read.fingerprint }, 'serving certificate loaded from files');
    }
    // A good read ends a problem: the next one is logged again.
    this.#readProblem = undefined;
  }

  #report(problem: string): void {
    if (problem !== this.#readProblem) {
      const serving = this.#loaded ? 'still serving the previous certificate' : 'no certificate to serve yet';
      this.#o.logger.warn({ dir: this.#o.dir, problem }, `cannot load the serving certificate files; ${serving}`);
    }
    this.#readProblem = problem;
  }
}
