/**
 * `s3://BUCKET[/PREFIX]` (a destination) and `s3://BUCKET[/PREFIX]/NAME` (one backup object) parsed
 * and checked, with the error naming the flag or argument. Pure.
 */

/** A bucket and a key prefix (no leading or trailing slash; empty for the bucket's top level). */
export interface S3Location {
  readonly bucket: string;
  readonly prefix: string;
}

/** S3 bucket naming rules (3-63 characters, lower case, digits, dots, hyphens); Swift and MinIO accept the same. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * Parses `s3://BUCKET[/PREFIX]`; `what` names the flag or argument in the error.
 * @throws Error naming `what` and the problem.
 */
export function parseS3Url(url: string, what: string): S3Location {
  const m = /^s3:\/\/([^/]*)(?:\/(.*))?$/.exec(url);
  if (!m) throw new Error(`${what}: expected s3://BUCKET[/PREFIX], got ${JSON.stringify(url)}`);
  const bucket = m[1]!;
  if (!BUCKET.test(bucket) || bucket.includes('..')) throw new Error(`${what}: ${JSON.stringify(bucket)} is not an S3 bucket name (3-63 characters: a-z, 0-9, '.', '-')`);
  const prefix = (m[2] ?? '').replace(/\/+$/, '');
  if (prefix.split('/').some((part) => part === '' || part === '.' || part === '..') && prefix !== '') {
    throw new Error(`${what}: the prefix ${JSON.stringify(prefix)} has an empty, '.' or '..' segment`);
  }
  return { bucket, prefix };
}

/** Parses `s3://BUCKET[/PREFIX]/NAME` into the location and the object name (the last segment). */
export function parseS3ObjectUrl(url: string, what: string): S3Location & { readonly name: string } {
  const location = parseS3Url(url, what);
  if (location.prefix === '') throw new Error(`${what}: expected s3://BUCKET[/PREFIX]/NAME (an object), got ${JSON.stringify(url)}`);
  const cut = location.prefix.lastIndexOf('/');
  return { bucket: location.bucket, prefix: cut < 0 ? '' : location.prefix.slice(0, cut), name: location.prefix.slice(cut + 1) };
}

/** The key of `name` under `location`'s prefix. */
export function keyOf(location: S3Location, name: string): string {
  return location.prefix === '' ? name : `${location.prefix}/${name}`;
}

/** `s3://bucket/prefix/name` for logs. */
export function urlOf(location: S3Location, name?: string): string {
  return `s3://${location.bucket}${location.prefix ? `/${location.prefix}` : ''}${name ? `/${name}` : ''}`;
}
