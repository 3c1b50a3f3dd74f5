/**
 * Streams an etcd snapshot through the Maintenance.Snapshot RPC (@grpc/grpc-js, etcd's own wire
 * format from etcd-rpc-proto.ts) into an open file, chunk by chunk: grpc-js reads the next message only
 * when the previous batch is written, so memory holds at most the HTTP/2 window (2 MiB) and one 1 MiB
 * write batch whatever the database size.
 * Mutual TLS from a mounted Secret directory (`ca.crt`, `tls.crt`, `tls.key`).
 */
import { credentials as grpcCredentials, Client, Metadata, status as grpcStatus, type ChannelCredentials, type ServiceError } from '@grpc/grpc-js';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import { realClock, type Clock, type TimerHandle } from '../runtime/clock.ts';
import { writeAll } from './file-sink.ts';
import { SnapshotDigest, type SnapshotDigestResult } from './snapshot-verify.ts';
import { decodeSnapshotResponse, encodeSnapshotRequest, SNAPSHOT_METHOD, type SnapshotChunk } from './etcd-rpc-proto.ts';

/** TLS material read from the Secret's mount. */
export interface EtcdTls {
  readonly ca: Buffer;
  readonly cert: Buffer | undefined;
  readonly key: Buffer | undefined;
  /** The mount, for messages. @default unknown */
  readonly dir?: string;
}

/**
 * What may explain a failed TLS handshake, in words that name the file: no client pair in the mount
 * (etcd with --client-cert-auth then answers only "bad certificate"), or a certificate outside its
 * validity period at `now`, with its subject and notBefore/notAfter. Empty when nothing is wrong.
 */
function tlsProblems(tls: EtcdTls, now: number): string[] {
  const dir = tls.dir ?? '--etcd-tls-dir';
  const problems: string[] = [];
  if (tls.cert === undefined) problems.push(`${join(dir, 'tls.crt')} and ${join(dir, 'tls.key')} are absent: no client certificate was sent (etcd started with --client-cert-auth requires one)`);
  for (const [name, pem] of [['tls.crt', tls.cert], ['ca.crt', tls.ca]] as const) {
    if (pem === undefined) continue;
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(pem);
    } catch (err) {
      problems.push(`${join(dir, name)} is not a PEM certificate (${(err as Error).message})`);
      continue;
    }
    const subject = cert.subject.replace(/\n/g, ', ');
    if (Date.parse(cert.validTo) < now) problems.push(`${join(dir, name)} (${subject}) expired at ${new Date(cert.validTo).toISOString()} (notAfter)`);
    else if (Date.parse(cert.validFrom) > now) problems.push(`${join(dir, name)} (${subject}) is not valid before ${new Date(cert.validFrom).toISOString()} (notBefore)`);
  }
  return problems;
}

/**
 * Reads `ca.crt` and, when present, the client pair `tls.crt` + `tls.key` from `dir`.
 * @throws Error naming the file when one is missing or unreadable, or only half of the pair exists.
 */
export async function readEtcdTls(dir: string): Promise<EtcdTls> {
  const load = async (name: string, required: boolean): Promise<Buffer | undefined> => {
    try {
      return await readFile(join(dir, name));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && !required) return undefined;
      throw new Error(`--etcd-tls-dir: cannot read ${join(dir, name)} (${code ?? (err as Error).message})`, { cause: err });
    }
  };
  const [ca, cert, key] = await Promise.all([load('ca.crt', true), load('tls.crt', false), load('tls.key', false)]);
  if ((cert === undefined) !== (key === undefined)) throw new Error(`--etcd-tls-dir: ${dir} has ${cert ? 'tls.crt without tls.key' : 'tls.key without tls.crt'}`);
  return { ca: ca!, cert, key, dir };
}

/** HTTP/2 receive window of the snapshot stream (bytes in flight from etcd). */
export const FLOW_CONTROL_WINDOW = 2 << 20;

/** gRPC target (`host:port`) and credentials of one endpoint URL. */
export function channelFor(endpoint: string, tls: EtcdTls | undefined): { target: string; credentials: ChannelCredentials } {
  const url = new URL(endpoint);
  const port = url.port || '2379';
  const target = `${url.hostname}:${port}`;
  if (url.protocol === 'http:') return { target, credentials: grpcCredentials.createInsecure() };
  if (url.protocol !== 'https:') throw new Error(`endpoint ${endpoint}: scheme must be http or https`);
  return { target, credentials: grpcCredentials.createSsl(tls?.ca ?? null, tls?.key ?? null, tls?.cert ?? null) };
}

/** Options of {@link streamSnapshot}. */
export interface StreamSnapshotOptions {
  /** One etcd client URL. */
  readonly endpoint: string;
  readonly tls: EtcdTls | undefined;
  /** Where the bytes go, written from position 0. */
  readonly file: FileHandle;
  /** Called with each written byte count, and once with the expected total when etcd tells it. */
  readonly onBytes: (written: number) => void;
  readonly onTotal?: (totalBytes: number) => void;
  /** Cancel the stream when no chunk arrives for this long. @default 30_000 */
  readonly idleTimeoutMs?: number;
  /** Aborts the transfer (SIGTERM). */
  readonly signal?: AbortSignal;
  /** @default realClock */
  readonly clock?: Clock;
}

/** Why one endpoint failed, for the log and the final error. */
export class EndpointError extends Error {
  constructor(readonly endpoint: string, reason: string, options?: ErrorOptions) {
    super(`${endpoint}: ${reason}`, options);
    this.name = 'EndpointError';
  }
}

/** The reason of a gRPC failure in words an operator can act on. */
function describeGrpcError(err: unknown): string {
  const e = err as Partial<ServiceError>;
  if (typeof e.code === 'number') {
    const name = grpcStatus[e.code] ?? String(e.code);
    return `${name}: ${e.details || e.message}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** What {@link streamSnapshot} wrote. */
export interface StreamedSnapshot {
  readonly bytes: number;
  /** SHA-256 digests of exactly the bytes written (whole file, and etcd's trailer check). */
  readonly digest: SnapshotDigestResult;
}

/**
 * Streams one snapshot from `endpoint` into `file`, hashing the bytes as they are written; resolves
 * once etcd ended the stream with status OK. Rejects with {@link EndpointError} (connection refused, TLS failure, idle
 * stream, a member dying mid-stream); the caller discards the file and tries the next endpoint.
 */
export async function streamSnapshot(options: StreamSnapshotOptions): Promise<StreamedSnapshot> {
  const clock = options.clock ?? realClock;
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
  const { target, credentials } = channelFor(options.endpoint, options.tls);
  const client = new Client(target, credentials, {
    'grpc.max_receive_message_length': 16 << 20,
    // HTTP/2 flow-control window: with the default 64 KiB etcd waits for a window update every two
    // chunks (a 232 MB snapshot took 2.5 s instead of 1.3-1.5 s); 2 MiB bounds what sits in memory.
    'grpc-node.flow_control_window': FLOW_CONTROL_WINDOW,
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 10_000,
    // One connection attempt per endpoint: the runner moves on to the next endpoint instead.
    'grpc.initial_reconnect_backoff_ms': 1000,
  });
  const call = client.makeServerStreamRequest<Buffer, SnapshotChunk>(SNAPSHOT_METHOD, () => encodeSnapshotRequest(), decodeSnapshotResponse, Buffer.alloc(0), new Metadata());
  let idle: TimerHandle | undefined;
  let idleFired = false;
  const armIdle = (): void => {
    if (idle) clock.clearTimeout(idle);
    idle = clock.setTimeout(() => {
      idleFired = true;
      call.cancel();
    }, idleTimeoutMs);
  };
  const onAbort = (): void => call.cancel();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  // An abort before the listener was added (SIGTERM while the temp file was created) never fires it.
  if (options.signal?.aborted) onAbort();
  const digest = new SnapshotDigest();
  async function* blobs(): AsyncGenerator<Buffer> {
    let first = true;
    for await (const chunk of call as AsyncIterable<SnapshotChunk>) {
      armIdle();
      if (first) {
        // The first chunk tells the database size; etcd appends a 32-byte SHA-256 after it.
        options.onTotal?.(chunk.blob.length + chunk.remainingBytes + 32);
        first = false;
      }
      digest.update(chunk.blob);
      yield chunk.blob;
    }
  }
  try {
    armIdle();
    const written = await writeAll(options.file, blobs(), options.onBytes);
    if (written === 0) throw new Error('etcd ended the stream without sending any data');
    return { bytes: written, digest: digest.digest() };
  } catch (err) {
    if (options.signal?.aborted) throw new EndpointError(options.endpoint, 'aborted (the Pod is being stopped)', { cause: err });
    if (idleFired) throw new EndpointError(options.endpoint, `no data for ${idleTimeoutMs / 1000} s; stream cancelled`, { cause: err });
    // Disk errors (ENOSPC, EIO) are not the endpoint's fault; the caller stops instead of retrying.
    if ((err as NodeJS.ErrnoException).syscall !== undefined) throw err;
    // A handshake refused for an expired or missing client certificate reads only "bad certificate": name the file.
    const problems = options.tls && new URL(options.endpoint).protocol === 'https:' ? tlsProblems(options.tls, clock.now()) : [];
    throw new EndpointError(options.endpoint, `${describeGrpcError(err)}${problems.length > 0 ? ` (TLS: ${problems.join('; ')})` : ''}`, { cause: err });
  } finally {
    if (idle) clock.clearTimeout(idle);
    options.signal?.removeEventListener('abort', onAbort);
    call.cancel();
    client.close();
  }
}
