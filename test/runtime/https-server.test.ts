import { once } from 'node:events';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SERVER_LIMITS, type RunningServer } from '../../src/runtime/http-server.ts';
import { startHttpsServer } from '../../src/runtime/https-server.ts';
import { createCertificateAuthority, issueServingCertificate, readCertificate, type CertificateAndKey } from '../../src/runtime/tls-certificates.ts';
import { tlsRequest } from './tls-client.ts';

const NAME = 'hook.ns.svc';
let ca: CertificateAndKey;
let first: CertificateAndKey;
let second: CertificateAndKey;

beforeAll(async () => {
  const now = Date.now();
  ca = await createCertificateAuthority({ commonName: 'test-ca', notBefore: now - 3_600_000, notAfter: now + 86_400_000 });
  first = await issueServingCertificate(ca, { commonName: 'hook', dnsNames: [NAME], notBefore: now - 3_600_000, notAfter: now + 86_400_000 });
  second = await issueServingCertificate(ca, { commonName: 'hook', dnsNames: [NAME], notBefore: now - 3_600_000, notAfter: now + 86_400_000 });
});

const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('startHttpsServer', () => {
  it('binds at once, fails handshakes until it has credentials, then serves them, and a rotation reaches the next connection', async () => {
    const server = await startHttpsServer({
      address: { host: '127.0.0.1', port: 0 },
      routes: { '/hello': (_req, res) => void res.writeHead(200, { 'Content-Type': 'text/plain' }).end('hi') },
    });
    servers.push(server);
    expect(server.hasCredentials).toBe(false);
    await expect(tlsRequest(`${server.url}/hello`, { caPem: ca.certPem, servername: NAME, method: 'GET' })).rejects.toThrow();
    server.setCredentials(first);
    const a = await tlsRequest(`${server.url}/hello`, { caPem: ca.certPem, servername: NAME, method: 'GET' });
    expect(a).toMatchObject({ status: 200, body: 'hi', peerFingerprint: readCertificate(first.certPem).fingerprint256 });
    server.setCredentials(second);
    const b = await tlsRequest(`${server.url}/hello`, { caPem: ca.certPem, servername: NAME, method: 'GET' });
    expect(b.peerFingerprint).toBe(readCertificate(second.certPem).fingerprint256);
    expect((await tlsRequest(`${server.url}/other`, { caPem: ca.certPem, servername: NAME, method: 'GET' })).status).toBe(404);
  });

  it('refuses credentials whose key does not fit the certificate, and keeps serving the old ones', async () => {
    const server = await startHttpsServer({ address: { host: '127.0.0.1', port: 0 }, routes: { '/': (_req, res) => void res.end('ok') }, credentials: first });
    servers.push(server);
    expect(() => server.setCredentials({ certPem: first.certPem, keyPem: second.keyPem })).toThrow();
    expect((await tlsRequest(`${server.url}/`, { caPem: ca.certPem, servername: NAME, method: 'GET' })).peerFingerprint).toBe(readCertificate(first.certPem).fingerprint256);
  });

  it('cuts a connection whose client stops reading its answer, so what the answer holds is given back', async () => {
    let closed!: () => void;
    const answerClosed = new Promise<void>((resolve) => (closed = resolve));
    const server = await startHttpsServer({
      address: { host: '127.0.0.1', port: 0 },
      limits: { ...DEFAULT_SERVER_LIMITS, idleTimeoutMs: 300 },
      credentials: first,
      routes: {
        '/big': async (_req, res) => {
          res.once('close', closed);
          res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
          const chunk = Buffer.alloc(1024 * 1024);
          // Far more than the socket buffers hold: the writes stall once the client stops reading.
          for (let i = 0; i < 256 && !res.destroyed; i++) if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
          res.end();
        },
      },
    });
    servers.push(server);
    const req = httpsRequest(`${server.url}/big`, { ca: ca.certPem, servername: NAME, agent: false }, (res) => res.pause());
    req.on('error', () => undefined);
    req.end();
    await answerClosed;
    req.destroy();
  });

  it('closes a connection that never starts its TLS handshake after the handshake timeout', async () => {
    const server = await startHttpsServer({ address: { host: '127.0.0.1', port: 0 }, routes: {}, credentials: first, handshakeTimeoutMs: 200 });
    servers.push(server);
    const socket = connect(server.address.port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.resume();
    await once(socket, 'close');
  });

  it('is not trusted for a name the certificate does not carry', async () => {
    const server = await startHttpsServer({ address: { host: '127.0.0.1', port: 0 }, routes: { '/': (_req, res) => void res.end('ok') }, credentials: first });
    servers.push(server);
    await expect(tlsRequest(`${server.url}/`, { caPem: ca.certPem, servername: 'other.ns.svc', method: 'GET' })).rejects.toThrow(/altnames|Hostname/);
  });
});
