/**
 * S3 failures in one line an operator can act on: the server's error code and HTTP status, what it
 * usually means here, and the flag or variable to check. Credentials never appear (the SDK's messages
 * carry the access key id at most, which is not secret but is left out anyway).
 */

interface SdkError {
  readonly name?: string;
  readonly message?: string;
  readonly code?: string;
  readonly Code?: string;
  readonly $metadata?: { readonly httpStatusCode?: number; readonly attempts?: number };
  readonly cause?: unknown;
}

const TLS_CODES = new Set(['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'EPROTO', 'ERR_SSL_WRONG_VERSION_NUMBER']);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'TimeoutError', 'RequestTimeout']);

/** The error's code: the S3 error code, or a Node system error code, or its name. */
export function s3ErrorCode(err: unknown): string {
  const e = (err ?? {}) as SdkError;
  const nested = e.cause as SdkError | undefined;
  return e.Code ?? e.code ?? nested?.code ?? e.name ?? 'Error';
}

/** Whether the failure is an abort (SIGTERM): the run says so instead of describing a network error. */
export function isAbort(err: unknown): boolean {
  const e = (err ?? {}) as SdkError;
  return e.name === 'AbortError' || s3ErrorCode(err) === 'ABORT_ERR';
}

/** `<what>: <reason> (<code>, HTTP <status>)`, one line. */
export function describeS3Error(what: string, err: unknown, context: { readonly bucket?: string; readonly endpoint?: string } = {}): string {
  const e = (err ?? {}) as SdkError;
  const code = s3ErrorCode(err);
  const status = e.$metadata?.httpStatusCode;
  const attempts = e.$metadata?.attempts;
  const tag = `(${code}${status ? `, HTTP ${status}` : ''}${attempts && attempts > 1 ? `, ${attempts} attempts` : ''})`;
  const where = context.endpoint ?? 'the S3 endpoint';
  const message = (e.message ?? String(err)).split('\n')[0]!;
  let reason: string;
  if (code === 'InvalidAccessKeyId' || code === 'SignatureDoesNotMatch' || code === 'InvalidToken' || code === 'ExpiredToken') {
    reason = 'the server refused the credentials: check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN)';
  } else if (code === 'AccessDenied' || status === 403 && code !== 'RequestTimeTooSkewed') {
    reason = `access denied${context.bucket ? ` to bucket ${context.bucket}` : ''}: check the credentials (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) and the bucket's policy`;
  } else if (code === 'NoSuchBucket') {
    reason = `bucket ${context.bucket ?? ''} does not exist (the runner never creates buckets): check --destination-url, or create it`.replace('bucket  ', 'bucket ');
  } else if (code === 'RequestTimeTooSkewed') {
    reason = "this node's clock differs from the server's by more than 15 minutes: fix the node's time (NTP)";
  } else if (code === 'SlowDown' || code === 'ServiceUnavailable' || status === 503) {
    reason = 'the server kept throttling requests (503 SlowDown) after retries with backoff: retry later, or lower the request rate on this bucket';
  } else if (TLS_CODES.has(code) || /certificate|TLS|SSL/i.test(message)) {
    reason = `TLS failure talking to ${where}: ${message}; for a private CA pass --s3-ca-file`;
  } else if (NETWORK_CODES.has(code)) {
    reason = `cannot reach ${where}: ${message || code}`;
  } else if (code === 'NoSuchKey' || code === 'NotFound' || status === 404) {
    reason = 'no such object';
  } else {
    reason = message;
  }
  return `${what}: ${reason} ${tag}`;
}
