/**
 * The `--s3-*` options and their checks, apart from the S3 client: the argument parser of every runner
 * command imports them, and the AWS SDK (1 MB of bundle, ~0.1 s and 18 MB at each start) must load only
 * for a run or tool that talks to a bucket.
 */
/** How to reach the object store (flags `--s3-*`). */
export interface S3Options {
  /** `--s3-endpoint`: an S3-compatible server's URL; unset: AWS S3 of the region. */
  readonly endpoint: string | undefined;
  /** `--s3-region`; unset: `AWS_REGION`, `AWS_DEFAULT_REGION`, then us-east-1. */
  readonly region: string | undefined;
  /** `--s3-force-path-style`: `https://host/bucket/key` instead of `https://bucket.host/key`. */
  readonly forcePathStyle: boolean;
  /** `--s3-ca-file`: PEM CA bundle trusted for the endpoint (private CAs); added to the system's. */
  readonly caFile: string | undefined;
  /** `--s3-allow-http`: the explicit opt-in an `http://` endpoint needs (credentials and data in clear). */
  readonly allowHttp: boolean;
}

/**
 * Checks `options` (the `http://` opt-in, the endpoint's form) without touching the network.
 * @throws Error naming the flag and the problem.
 */
export function checkS3Options(options: S3Options): void {
  if (options.endpoint === undefined) return;
  let url: URL;
  try {
    url = new URL(options.endpoint);
  } catch {
    throw new Error(`--s3-endpoint: ${JSON.stringify(options.endpoint)} is not a URL`);
  }
  if (url.protocol === 'http:' && !options.allowHttp) {
    throw new Error(`--s3-endpoint: ${options.endpoint} is plain http (credentials and backups would cross the network unencrypted); use https, or pass --s3-allow-http to accept that`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--s3-endpoint: expected an http(s):// URL, got ${JSON.stringify(options.endpoint)}`);
  if (url.username || url.password) throw new Error('--s3-endpoint: must not carry credentials (they come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)');
}
