/**
 * The S3 client of the runner and its tools (AWS SDK v3): endpoint, region, path style, a private CA,
 * credentials from the standard `AWS_*` environment variables only, and the settings every S3 server
 * we test against needs. Credentials never come from flags and never reach a log line.
 */
import { readFileSync } from 'node:fs';
import { Agent as HttpsAgent } from 'node:https';
import { createHash } from 'node:crypto';
import { rootCertificates } from 'node:tls';
import { S3Client } from '@aws-sdk/client-s3';
import { http } from '../../runtime/node-http.ts';
import { checkS3Options, type S3Options } from './s3-options.ts';

/** Attempts per request: throttling (503 SlowDown) and transient errors back off exponentially in between. */
export const S3_MAX_ATTEMPTS = 6;
/** Connection establishment limit: an endpoint that does not answer fails within this. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** A request whose socket stays silent this long fails (a hung server). */
export const REQUEST_TIMEOUT_MS = 120_000;

/** The environment variables the credentials come from. */
export const CREDENTIAL_ENV = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'] as const;

/**
 * An S3 client for `options`, credentials from `env`.
 * @throws Error when a credential variable is missing or the CA file cannot be read.
 */
export function createS3Client(options: S3Options, env: Readonly<Record<string, string | undefined>>): S3Client {
  checkS3Options(options);
  const accessKeyId = env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'];
  if (!accessKeyId || !secretAccessKey) throw new Error('object store credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary credentials) in the environment, e.g. from a Secret');
  let ca: string | undefined;
  if (options.caFile !== undefined) {
    try {
      ca = readFileSync(options.caFile, 'utf8');
    } catch (err) {
      throw new Error(`--s3-ca-file: cannot read ${options.caFile} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err });
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`--s3-ca-file: ${options.caFile} holds no PEM certificate`);
  }
  const sessionToken = env['AWS_SESSION_TOKEN'];
  const client = new S3Client({
    region: options.region ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'] ?? 'us-east-1',
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    forcePathStyle: options.forcePathStyle,
    credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
    maxAttempts: S3_MAX_ATTEMPTS,
    // The SDK's default (3.729+) streams bodies as aws-chunked with trailing CRC32 checksums, which
    // Swift's s3api, Ceph and other S3 servers refuse (501). The runner checks content itself: ETag and SHA-256.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      connectionTimeout: CONNECT_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      httpAgent: new http.Agent({ keepAlive: true, maxSockets: 16 }),
      // The CA file is added to Node's bundled roots, so a public endpoint still verifies.
      httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 16, ...(ca === undefined ? {} : { ca: [ca, ...rootCertificates] }) }),
    },
  });
  // DeleteObjects: the SDK now sends a CRC32 checksum header, but S3 requires Content-MD5 on this call
  // and Swift's s3api, like other S3 servers, refuses the request without it (400).
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const request = args.request as { headers?: Record<string, string>; body?: unknown };
      if (context.commandName === 'DeleteObjectsCommand' && request.headers && (typeof request.body === 'string' || request.body instanceof Uint8Array)) {
        request.headers['content-md5'] = createHash('md5').update(request.body).digest('base64');
      }
      // A part's integrity is its Content-MD5, which the server checks (and the run checks the object's
      // ETag): signing its SHA-256 too made the SDK hash every byte once more and the server verify it
      // once more (Swift's proxy in Python: the upload's bottleneck), where AWS SDKs sign parts sent over
      // https as UNSIGNED-PAYLOAD anyway.
      if (context.commandName === 'UploadPartCommand' && request.headers) request.headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
      return next(args);
    },
    { step: 'build', name: 'deleteObjectsContentMd5' },
  );
  return client;
}

