/**
 * The object-store flags of `backup` (runs and tools), parsed and checked: a mistake names the flag.
 *
 *   --destination-url=s3://BUCKET[/PREFIX] [--s3-endpoint=URL] [--s3-region=R] [--s3-force-path-style]
 *   [--s3-ca-file=F] [--s3-allow-http] [--age-recipient=age1…]… [--compression=zstd|gzip|none]
 *   [--s3-verify=etag|download]
 */
import type { Compression } from './object-names.ts';
import { checkS3Options, type S3Options } from './s3-options.ts';
import { parseS3Url, type S3Location } from './s3-location.ts';

/** Where and how a run uploads. */
export interface ObjectStoreTarget {
  readonly location: S3Location;
  readonly s3: S3Options;
  readonly compression: Compression;
  /** age recipients (`age1…`); none: not encrypted. */
  readonly ageRecipients: readonly string[];
  /** How the upload is confirmed: `etag` (HeadObject: size and multipart ETag) or `download` (read it all back). */
  readonly verify: 'etag' | 'download';
}

/** The `parseArgs` options of the S3 connection flags (runs and tools). */
export const S3_FLAG_OPTIONS = {
  's3-endpoint': { type: 'string' },
  's3-region': { type: 'string' },
  's3-force-path-style': { type: 'boolean' },
  's3-ca-file': { type: 'string' },
  's3-allow-http': { type: 'boolean' },
} as const;

/** The `parseArgs` options of a run's object-store flags. */
export const UPLOAD_FLAG_OPTIONS = {
  ...S3_FLAG_OPTIONS,
  'destination-url': { type: 'string' },
  'age-recipient': { type: 'string', multiple: true },
  compression: { type: 'string' },
  's3-verify': { type: 'string' },
} as const;

type Values = Readonly<Record<string, string | boolean | readonly string[] | undefined>>;

function text(values: Values, flag: string): string | undefined {
  const value = values[flag];
  if (value === '') throw new Error(`--${flag}: empty`);
  return typeof value === 'string' ? value : undefined;
}

/** The S3 connection flags as options; throws naming the flag. */
export function s3OptionsFrom(values: Values): S3Options {
  const options: S3Options = {
    endpoint: text(values, 's3-endpoint'),
    region: text(values, 's3-region'),
    forcePathStyle: values['s3-force-path-style'] === true,
    caFile: text(values, 's3-ca-file'),
    allowHttp: values['s3-allow-http'] === true,
  };
  if (options.region !== undefined && !/^[a-z0-9-]{1,64}$/.test(options.region)) throw new Error(`--s3-region: ${JSON.stringify(options.region)} is not a region name`);
  checkS3Options(options);
  return options;
}

/** A run's target from its flags (`--destination-url` given); throws naming the flag. */
export function objectStoreTargetFrom(values: Values): ObjectStoreTarget {
  const location = parseS3Url(text(values, 'destination-url') ?? '', '--destination-url');
  const compression = compressionFrom(values);
  const verify = text(values, 's3-verify') ?? 'etag';
  if (verify !== 'etag' && verify !== 'download') throw new Error(`--s3-verify: expected etag or download, got ${JSON.stringify(verify)}`);
  return { location, s3: s3OptionsFrom(values), compression, ageRecipients: ageRecipientsFrom(values), verify };
}

/** `--compression` (default zstd), for a bucket or an encrypted directory backup; throws naming the flag. */
export function compressionFrom(values: Values): Compression {
  const compression = text(values, 'compression') ?? 'zstd';
  if (compression !== 'zstd' && compression !== 'gzip' && compression !== 'none') throw new Error(`--compression: expected zstd, gzip or none, got ${JSON.stringify(compression)}`);
  return compression;
}

/** The `--age-recipient` values (none: not encrypted), checked for shape; throws naming the flag. */
export function ageRecipientsFrom(values: Values): readonly string[] {
  const ageRecipients = (values['age-recipient'] as readonly string[] | undefined) ?? [];
  for (const r of ageRecipients) {
    // The key itself is checked by age-encryption when the run starts; a secret key here is a dangerous mix-up.
    if (r.startsWith('AGE-SECRET-KEY-')) throw new Error('--age-recipient: that is an age identity (secret key), not a recipient: pass its public key (age1…), keep the identity off the cluster');
    if (!r.startsWith('age1')) throw new Error(`--age-recipient: expected an age recipient (age1…), got ${JSON.stringify(r.slice(0, 12))}…`);
  }
  return ageRecipients;
}
