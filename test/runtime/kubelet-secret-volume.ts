/**
 * Writes a directory the way kubelet projects a Secret volume (`AtomicWriter`, pkg/volume/util/atomic_writer.go):
 * each version of the data goes into a fresh hidden `..<timestamp>` directory, a `..data_tmp` symlink to it
 * is renamed over `..data` (the one atomic step), the visible names are symlinks `tls.crt → ..data/tls.crt`
 * created once, and the previous version's directory is removed afterwards.
 */
import { mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createCertificateAuthority, issueServingCertificate, type CertificateAndKey } from '../../src/runtime/tls-certificates.ts';

/** A kubelet-style projected volume in `dir`. */
export class KubeletSecretVolume {
  #generation = 0;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  /** Publishes `files` (name → content) as the volume's new version, atomically for readers. */
  write(files: Readonly<Record<string, string>>): void {
    const version = `..2026_11_30_12_00_00.${String(++this.#generation).padStart(9, '0')}`;
    mkdirSync(join(this.dir, version));
    for (const [name, content] of Object.entries(files)) writeFileSync(join(this.dir, version, name), content, { mode: 0o644 });
    const data = join(this.dir, '..data');
    const previous = existsSync(data) ? readlinkSync(data) : undefined;
    symlinkSync(version, join(this.dir, '..data_tmp'));
    renameSync(join(this.dir, '..data_tmp'), data);
    for (const name of Object.keys(files)) {
      if (!existsSync(join(this.dir, name))) symlinkSync(join('..data', name), join(this.dir, name));
    }
    if (previous) rmSync(join(this.dir, previous), { recursive: true, force: true });
  }
}

/** A fresh CA and a serving certificate it signed, valid for an hour either side of now. */
export async function caAndServing(dnsNames: readonly string[], commonName = 'test-ca'): Promise<{ ca: CertificateAndKey; serving: CertificateAndKey }> {
  const now = Date.now();
  const ca = await createCertificateAuthority({ commonName: `${commonName}-${now}`, notBefore: now - 3_600_000, notAfter: now + 86_400_000 });
  const serving = await issueServingCertificate(ca, { commonName: dnsNames[0] ?? 'serving', dnsNames, notBefore: now - 3_600_000, notAfter: now + 86_400_000 });
  return { ca, serving };
}

/** The files cert-manager writes into a `kubernetes.io/tls` Secret. */
export function tlsSecretFiles(pair: { ca: CertificateAndKey; serving: CertificateAndKey }): Record<string, string> {
  return { 'tls.crt': pair.serving.certPem, 'tls.key': pair.serving.keyPem, 'ca.crt': pair.ca.certPem };
}
