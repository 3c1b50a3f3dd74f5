/** A one-shot HTTPS request trusting only the given CA bundle, as kube-apiserver calls a webhook. */
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';

/** What came back, with the fingerprint of the certificate the server presented. */
export interface TlsResponse {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: string;
  readonly peerFingerprint: string;
}

/** POSTs (or sends `method`) `body` to `url`, verifying the server against `caPem` for `servername`. */
export function tlsRequest(url: string, options: { caPem: string; servername: string; body?: string; method?: string; contentType?: string }): Promise<TlsResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: options.method ?? 'POST',
      ca: options.caPem,
      servername: options.servername,
      agent: false,
      headers: { 'Content-Type': options.contentType ?? 'application/json', Accept: 'application/json' },
    }, (res) => {
      const peerFingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body: Buffer.concat(chunks).toString('utf8'), peerFingerprint }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}
