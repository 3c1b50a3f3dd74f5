import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RequestOptions } from 'node:https';
import { describe, expect, it } from 'vitest';
import { KubeConfig } from '../../src/kube/kube-config.ts';
import { FakeClock } from '../../src/runtime/clock.ts';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

function kubeconfig(user: Record<string, unknown>, cluster: Record<string, unknown> = { server: 'https://k8s.example:6443', 'certificate-authority-data': b64('CA PEM') }): string {
  return JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'dev',
    clusters: [{ name: 'c1', cluster }],
    users: [{ name: 'u1', user }],
    contexts: [{ name: 'dev', context: { cluster: 'c1', user: 'u1', namespace: 'team-a' } }, { name: 'other', context: { cluster: 'c1' } }],
  });
}

async function authHeader(config: KubeConfig): Promise<string | undefined> {
  const opts: RequestOptions = {};
  await config.authenticate(opts);
  return (opts.headers as Record<string, string> | undefined)?.['Authorization'];
}

describe('KubeConfig', () => {
  it('resolves the current context: server, namespace, CA and client certificate data, token', async () => {
    const config = KubeConfig.fromKubeconfig(kubeconfig({ token: 'abc', 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') }));
    expect(config.server).toBe('https://k8s.example:6443');
    expect(config.namespace).toBe('team-a');
    const tls = config.tlsOptions();
    expect([String(tls.ca), String(tls.cert), String(tls.key), tls.rejectUnauthorized]).toEqual(['CA PEM', 'CERT', 'KEY', true]);
    expect(await authHeader(config)).toBe('Bearer abc');
  });

  it('reads certificate files relative to the kubeconfig and honours insecure-skip-tls-verify and another context', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kc-'));
    writeFileSync(join(dir, 'ca.crt'), 'FILE CA');
    writeFileSync(join(dir, 'config'), kubeconfig({}, { server: 'https://h:1', 'certificate-authority': 'ca.crt', 'insecure-skip-tls-verify': true }));
    const config = KubeConfig.fromKubeconfigFile(join(dir, 'config'), { context: 'other' });
    expect(String(config.tlsOptions().ca)).toBe('FILE CA');
    expect(config.tlsOptions().rejectUnauthorized).toBe(false);
    expect(config.namespace).toBe('default');
    expect(await authHeader(config)).toBeUndefined();
  });

  it('re-reads a token file once the refresh period has passed, as bound tokens rotate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sa-'));
    writeFileSync(join(dir, 'token'), 'first\n');
    writeFileSync(join(dir, 'ca.crt'), 'SA CA');
    writeFileSync(join(dir, 'namespace'), 'operators');
    const clock = new FakeClock();
    const config = KubeConfig.inCluster({ env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, dir, clock });
    expect(config.server).toBe('https://[fd00::1]:443');
    expect(config.namespace).toBe('operators');
    expect(await authHeader(config)).toBe('Bearer first');
    writeFileSync(join(dir, 'token'), 'second\n');
    clock.step(59_999);
    expect(await authHeader(config)).toBe('Bearer first');
    clock.step(1);
    expect(await authHeader(config)).toBe('Bearer second');
  });

  it('marks exec users for the lazily loaded client-node fallback instead of failing', () => {
    const config = KubeConfig.fromKubeconfig(kubeconfig({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws' } }));
    expect(config.auth).toMatchObject({ type: 'delegated', context: 'dev' });
  });

  it.each<[string, () => KubeConfig, string]>([
    ['no in-cluster environment', () => KubeConfig.inCluster({ env: {} }), 'in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set (not running in a pod?)'],
    ['an unknown context', () => KubeConfig.fromKubeconfig(kubeconfig({}), { context: 'prod' }), 'kubeconfig: contexts has no entry named "prod"'],
    ['a cluster without server', () => KubeConfig.fromKubeconfig(kubeconfig({}, {})), 'kubeconfig: clusters[c1].cluster.server must be a non-empty string, got undefined'],
    ['a server that is not a URL', () => new KubeConfig({ server: 'not a url' }), 'server: "not a url" is not a URL (expected e.g. https://host:6443)'],
    ['a server with another protocol', () => new KubeConfig({ server: 'k8s:6443' }), 'server: protocol "k8s:" is not supported (use https: or http:)'],
  ])('rejects %s with a message naming the field', (_name, load, message) => {
    expect(load).toThrow(message);
  });
});
