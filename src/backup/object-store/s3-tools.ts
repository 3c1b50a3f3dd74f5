/**
 * The on-call tools for a bucket: `backup list s3://…`, `backup verify s3://…/NAME [--identity F]` and
 * `backup fetch s3://…/NAME --identity F -o OUT`. verify and fetch download the object once, hashing
 * what arrives (against the `.sha256` sidecar) while it is decrypted (age), decompressed and checked
 * (etcd snapshot: trailer, bbolt meta and bucket walk; archive: every tar header to the end); fetch
 * leaves OUT only when every check passed: the snapshot `etcdctl snapshot restore` takes, or the tar.
 */
import { GetObjectCommand, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createWriteStream } from 'node:fs';
import { rename, rm, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, basename } from 'node:path';
import { Readable, Writable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Verification } from '../backup-tools.ts';
import { parseSidecar } from '../sidecar.ts';
import { verifySnapshot } from '../snapshot-verify.ts';
import { ageDecryptStream } from '../pipeline/age-stream.ts';
import { readIdentities } from '../pipeline/age-identity.ts';

export { readIdentities } from '../pipeline/age-identity.ts';
import { decompressor } from '../pipeline/compression.ts';
import { OBJECT_SIDECAR_SUFFIX, parseObjectBackupName } from './object-names.ts';
import { listBackupObjects } from './s3-bucket.ts';
import { describeS3Error } from './s3-errors.ts';
import { keyOf, parseS3ObjectUrl, parseS3Url, type S3Location } from './s3-location.ts';
import { tarChecker } from '../pipeline/tar-check.ts';
import { sha256Pass } from '../pipeline/sha256-pass.ts';

/**
 * Result of {@link verifyObject} and {@link fetchObject}: a file's {@link Verification} named by its
 * object, where whether the content was checked is always said (every object may be encrypted).
 */
export interface ObjectVerification extends Omit<Verification, 'file' | 'content'> {
  readonly object: string;
  readonly content: NonNullable<Verification['content']>;
}

/**
 * Downloads `url`, checks it against its sidecar and, when it can be decrypted, its content; with
 * `output`, the checked plaintext ends up there (written beside it first, renamed at the end).
 */
async function downloadAndCheck(client: S3Client, url: string, identities: string[] | undefined, output: string | undefined): Promise<ObjectVerification> {
  const target = parseS3ObjectUrl(url, 'object');
  const parsed = parseObjectBackupName(target.name);
  if (!parsed) throw new Error(`${url}: not a backup object name (<schedule>-<yyyymmddThhmmssZ>.<db|tar>[.zst|.gz][.age])`);
  const key = keyOf(target, target.name);
  const object = `s3://${target.bucket}/${key}`;
  const s3 = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      throw new Error(describeS3Error(what, err, { bucket: target.bucket }), { cause: err });
    }
  };
  const head = await s3(object, () => client.send(new HeadObjectCommand({ Bucket: target.bucket, Key: key })));
  const size = head.ContentLength ?? 0;
  let sidecar: ObjectVerification['sidecar'] = 'missing';
  let recorded: string | undefined;
  try {
    const { Body } = await client.send(new GetObjectCommand({ Bucket: target.bucket, Key: key + OBJECT_SIDECAR_SUFFIX }));
    recorded = parseSidecar(await Body!.transformToString(), target.name);
    sidecar = recorded === undefined ? 'malformed' : 'matches';
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== 404) throw new Error(describeS3Error(`${object}${OBJECT_SIDECAR_SUFFIX}`, err, { bucket: target.bucket }), { cause: err });
  }
  const canRead = !parsed.encrypted || identities !== undefined;
  if (output !== undefined && !canRead) throw new Error(`${object} is age-encrypted: pass --identity=<file with its AGE-SECRET-KEY-1… line>`);
  const base = { object, kind: parsed.kind, size, sidecar };
  const { Body } = await s3(object, () => client.send(new GetObjectCommand({ Bucket: target.bucket, Key: key })));
  const hash = sha256Pass();
  const stages: Transform[] = [hash.stream];
  let scratch: string | undefined;
  let plainPath: string | undefined;
  let details: Record<string, number> = {};
  try {
    if (canRead) {
      if (parsed.encrypted) stages.push(ageDecryptStream(identities!));
      stages.push(decompressor(parsed.compression));
    }
    let sink: Writable;
    let entries: (() => Promise<number>) | undefined;
    if (canRead && parsed.kind === 'etcd-snapshot') {
      // The bucket walk needs random access: the snapshot goes to a file first.
      scratch = output === undefined ? await mkdtemp(join(tmpdir(), 'backup-verify-')) : undefined;
      plainPath = output === undefined ? join(scratch!, 'snapshot.db') : join(dirname(output), `.${basename(output)}.partial`);
      sink = createWriteStream(plainPath, { mode: 0o600 });
    } else if (canRead) {
      const check = tarChecker();
      stages.push(check.stream);
      entries = check.entries;
      if (output !== undefined) plainPath = join(dirname(output), `.${basename(output)}.partial`);
      sink = plainPath === undefined ? new Writable({ write: (_c, _e, done) => done() }) : createWriteStream(plainPath, { mode: 0o600 });
    } else {
      sink = new Writable({ write: (_c, _e, done) => done() });
    }
    try {
      await (pipeline as unknown as (...s: unknown[]) => Promise<void>)(Body as Readable, ...stages, sink);
    } catch (err) {
      return { ...base, ok: false, content: 'checked', problem: (err as Error).message };
    }
    const sha256 = hash.hex();
    if (recorded !== undefined && recorded !== sha256) return { ...base, sidecar: 'mismatch', ok: false, sha256, content: 'checked', problem: `SHA-256 ${sha256} differs from the sidecar's ${recorded}` };
    if (!canRead) return { ...base, ok: sidecar === 'matches', sha256, content: 'not checked: encrypted, no --identity', ...(sidecar === 'matches' ? {} : { problem: `sidecar ${sidecar}` }) };
    if (parsed.kind === 'etcd-snapshot') {
      try {
        const report = await verifySnapshot(plainPath!);
        details = { revision: report.revision, totalKeys: report.totalKeys };
      } catch (err) {
        return { ...base, ok: false, sha256, content: 'checked', problem: (err as Error).message };
      }
    } else {
      details = { entries: await entries!() };
    }
    if (sidecar !== 'matches') return { ...base, ok: false, sha256, content: 'checked', problem: `${target.name}${OBJECT_SIDECAR_SUFFIX} is ${sidecar}: the run that wrote it did not finish`, ...details };
    if (output !== undefined) {
      await rename(plainPath!, output);
      plainPath = undefined;
    }
    return { ...base, ok: true, sha256, content: 'checked', ...details };
  } finally {
    if (plainPath !== undefined && output !== undefined) await rm(plainPath, { force: true });
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  }
}

/** `backup verify s3://…/NAME`: never throws for a bad object (`ok: false` says why). */
export function verifyObject(client: S3Client, url: string, identities: string[] | undefined): Promise<ObjectVerification> {
  return downloadAndCheck(client, url, identities, undefined);
}

/** `backup fetch s3://…/NAME -o OUT`: OUT exists afterwards only when `ok`. */
export function fetchObject(client: S3Client, url: string, identities: string[] | undefined, output: string): Promise<ObjectVerification> {
  return downloadAndCheck(client, url, identities, output);
}

/** `backup list s3://BUCKET[/PREFIX]`: every backup object under the prefix as a text table. */
export async function listObjectsTable(client: S3Client, url: string): Promise<{ readonly text: string; readonly allOk: boolean }> {
  const location: S3Location = parseS3Url(url, 'list');
  let objects;
  try {
    objects = await listBackupObjects(client, location, undefined);
  } catch (err) {
    throw new Error(describeS3Error(`listing ${url}`, err, { bucket: location.bucket }), { cause: err });
  }
  const table = [['NAME', 'TIME', 'SIZE', 'ENCRYPTED', 'SIDECAR']];
  for (const o of objects) table.push([o.name, new Date(o.time).toISOString(), String(o.size), o.encrypted ? 'age' : 'no', o.sidecar ? 'yes' : 'NO (its run did not finish)']);
  const widths = table[0]!.map((_, col) => Math.max(...table.map((r) => r[col]!.length)));
  const text = table.map((r) => r.map((cell, col) => (col === r.length - 1 ? cell : cell.padEnd(widths[col]!))).join('  ')).join('\n') + '\n';
  return { text, allOk: objects.every((o) => o.sidecar) };
}
