/**
 * What the runner and its tools read from and remove in a bucket: a paged listing of backup objects
 * with their sidecars, one schedule's stale multipart uploads, and batched deletes. Only names that
 * parse as this schedule's backups (or their sidecars) are ever touched.
 */
import { AbortMultipartUploadCommand, DeleteObjectsCommand, ListMultipartUploadsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { keyOf, type S3Location } from './s3-location.ts';
import { OBJECT_SIDECAR_SUFFIX, parseObjectBackupName, type ObjectBackupName } from './object-names.ts';

/** One backup object of a listing. */
export interface ListedObject extends ObjectBackupName {
  readonly key: string;
  readonly size: number;
  /** Whether `<key>.sha256` exists: written only after the object was checked. */
  readonly sidecar: boolean;
}

/** DeleteObjects takes at most this many keys. */
export const DELETE_BATCH = 1000;

/** The name part of `key` under `location`, or undefined when it is deeper or elsewhere. */
function nameIn(location: S3Location, key: string): string | undefined {
  const head = location.prefix === '' ? '' : `${location.prefix}/`;
  if (!key.startsWith(head)) return undefined;
  const name = key.slice(head.length);
  return name.includes('/') ? undefined : name;
}

/**
 * Every backup object directly under `location` (of `schedule` only when given), following
 * continuation tokens (1000 keys a page), oldest first.
 */
export async function listBackupObjects(client: S3Client, location: S3Location, schedule: string | undefined, signal?: AbortSignal): Promise<ListedObject[]> {
  const objects = new Map<string, { key: string; size: number; parsed: ObjectBackupName }>();
  const sidecars = new Set<string>();
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: location.bucket, Prefix: keyOf(location, schedule === undefined ? '' : `${schedule}-`), ContinuationToken: token }),
      signal ? { abortSignal: signal } : {},
    );
    for (const item of page.Contents ?? []) {
      const name = item.Key === undefined ? undefined : nameIn(location, item.Key);
      if (name === undefined) continue;
      if (name.endsWith(OBJECT_SIDECAR_SUFFIX)) {
        sidecars.add(name.slice(0, -OBJECT_SIDECAR_SUFFIX.length));
        continue;
      }
      const parsed = parseObjectBackupName(name);
      // The prefix `<schedule>-` also matches schedule `<schedule>-x`: the parsed name decides.
      if (parsed && (schedule === undefined || parsed.schedule === schedule)) objects.set(name, { key: item.Key!, size: item.Size ?? 0, parsed });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return [...objects.values()]
    .map(({ key, size, parsed }) => ({ ...parsed, key, size, sidecar: sidecars.has(parsed.name) }))
    .sort((a, b) => (a.schedule === b.schedule ? a.time - b.time || (a.name < b.name ? -1 : 1) : a.schedule < b.schedule ? -1 : 1));
}

/**
 * Aborts `schedule`'s multipart uploads under `location` (left by a killed run: invisible, but billed
 * storage); returns the keys whose uploads were aborted.
 */
export async function abortStaleUploads(client: S3Client, location: S3Location, schedule: string, signal?: AbortSignal): Promise<string[]> {
  const aborted: string[] = [];
  let keyMarker: string | undefined;
  let uploadIdMarker: string | undefined;
  do {
    const page = await client.send(
      new ListMultipartUploadsCommand({ Bucket: location.bucket, Prefix: keyOf(location, `${schedule}-`), KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }),
      signal ? { abortSignal: signal } : {},
    );
    for (const upload of page.Uploads ?? []) {
      const name = upload.Key === undefined ? undefined : nameIn(location, upload.Key);
      if (name === undefined || parseObjectBackupName(name)?.schedule !== schedule || !upload.UploadId) continue;
      await client.send(new AbortMultipartUploadCommand({ Bucket: location.bucket, Key: upload.Key, UploadId: upload.UploadId }), signal ? { abortSignal: signal } : {});
      aborted.push(upload.Key!);
    }
    keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
    uploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
  } while (keyMarker);
  return aborted;
}

/** Deletes `keys` in batches of {@link DELETE_BATCH}; throws naming the first key the server refused. */
export async function deleteKeys(client: S3Client, bucket: string, keys: readonly string[], signal?: AbortSignal): Promise<void> {
  for (let i = 0; i < keys.length; i += DELETE_BATCH) {
    const batch = keys.slice(i, i + DELETE_BATCH);
    const result = await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }), signal ? { abortSignal: signal } : {});
    const refused = (result.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
    if (refused.length > 0) throw new Error(`DeleteObjects refused ${refused.length} key(s), first ${refused[0]!.Key}: ${refused[0]!.Code} ${refused[0]!.Message ?? ''}`.trim());
  }
}
