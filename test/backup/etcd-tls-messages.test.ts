/**
 * TLS failures against a real etcd with --client-cert-auth name the file at fault: a Secret mount
 * without tls.crt/tls.key, and an expired client certificate (its subject and notAfter), where the
 * runner said only "bad certificate" before.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBackup } from '../../src/backup/run-backup.ts';
import { EtcdHarness, makeCerts, requireEtcd, type Certs, type EtcdMember } from './etcd-harness.ts';

describe('etcd TLS failures name the certificate', () => {
  const harness = new EtcdHarness();
  let certs: Certs;
  let etcd: EtcdMember;

  beforeAll(async () => {
    requireEtcd();
    certs = await makeCerts(join(harness.root, 'pki'));
    etcd = await harness.start({ certs });
  }, 120_000);

  afterAll(() => harness.stopAll());

  async function runWith(tlsDir: string): Promise<{ code: number; err: string }> {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({}, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
    const destinationDir = join(harness.root, `dest-${Math.random().toString(36).slice(2)}`);
    const code = await runBackup({ kind: 'run', source: { kind: 'etcd', endpoints: [etcd.endpoint], tlsDir }, destinationDir, retention: { keepLast: 1 }, schedule: 'tls', namespace: undefined }, { logger });
    return { code, err: String(lines.at(-1)?.['err']) };
  }

  it('names tls.crt and tls.key when the mount holds only ca.crt', async () => {
    const dir = join(harness.root, 'tls-ca-only');
    mkdirSync(dir);
    copyFileSync(certs.ca, join(dir, 'ca.crt'));
    const { code, err } = await runWith(dir);
    expect(code).toBe(1);
    expect(err).toContain(`${join(dir, 'tls.crt')} and ${join(dir, 'tls.key')} are absent: no client certificate was sent`);
  }, 60_000);

  it('names an expired client certificate with its subject and notAfter', async () => {
    const dir = join(harness.root, 'tls-expired');
    mkdirSync(dir);
    copyFileSync(certs.ca, join(dir, 'ca.crt'));
    copyFileSync(certs.clientKey, join(dir, 'tls.key'));
    // Signed by the right CA, valid until yesterday (openssl: negative -days).
    execFileSync('openssl', ['x509', '-req', '-in', join(certs.dir, 'client.csr'), '-CA', certs.ca, '-CAkey', join(certs.dir, 'ca.key'), '-CAcreateserial', '-days', '-1', '-extfile', join(certs.dir, 'client.ext'), '-out', join(dir, 'tls.crt')], { stdio: 'ignore' });
    const { code, err } = await runWith(dir);
    expect(code).toBe(1);
    expect(err).toMatch(new RegExp(`${join(dir, 'tls.crt').replace(/[.]/g, '\\.')} \\(CN=test-client\\) expired at \\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z \\(notAfter\\)`));
  }, 60_000);
});
