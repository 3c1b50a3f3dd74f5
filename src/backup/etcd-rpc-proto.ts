/**
 * The subset of etcd's `api/etcdserverpb/rpc.proto` (v3.4, Apache-2.0) the runner calls,
 * Maintenance.Snapshot, and its wire format. The two messages are decoded here directly: SnapshotRequest
 * is empty and SnapshotResponse is three fields, while loading protobufjs for them cost 45 ms of every
 * start (its `long` dependency compiles a WebAssembly module) and memory the runner counts.
 * test/backup/etcd-rpc-proto.test.ts checks this decoder against protobufjs on {@link ETCD_SNAPSHOT_PROTO}.
 */

/** The proto source (package etcdserverpb), field numbers and names exactly etcd's. */
export const ETCD_SNAPSHOT_PROTO = `
syntax = "proto3";
package etcdserverpb;

message ResponseHeader {
  uint64 cluster_id = 1;
  uint64 member_id = 2;
  int64 revision = 3;
  uint64 raft_term = 4;
}

message SnapshotRequest {
}

message SnapshotResponse {
  ResponseHeader header = 1;
  // remaining_bytes is the number of blob bytes to be sent after this message
  uint64 remaining_bytes = 2;
  // blob contains the next chunk of the snapshot in the snapshot stream.
  bytes blob = 3;
}

service Maintenance {
  rpc Snapshot(SnapshotRequest) returns (stream SnapshotResponse) {}
}
`;

/** gRPC method path of Maintenance.Snapshot. */
export const SNAPSHOT_METHOD = '/etcdserverpb.Maintenance/Snapshot';

/** One decoded message of the snapshot stream. */
export interface SnapshotChunk {
  /** Bytes still to come after this chunk (0 on the last data chunk and on the SHA-256 trailer). */
  readonly remainingBytes: number;
  readonly blob: Buffer;
}

const EMPTY = Buffer.alloc(0);

/** Serializes the (empty) SnapshotRequest: a message without fields is zero bytes. */
export function encodeSnapshotRequest(): Buffer {
  return EMPTY;
}

/** A protobuf message that does not parse. */
export class ProtobufDecodeError extends Error {
  constructor(message: string) {
    super(`SnapshotResponse: ${message}`);
    this.name = 'ProtobufDecodeError';
  }
}

/** Reads a base-128 varint at `at`; returns [value, next offset]. Exact up to 2^53. */
function varint(bytes: Buffer, at: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (let i = at; i < bytes.length && i < at + 10; i++) {
    const byte = bytes[i]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, i + 1];
    scale *= 128;
  }
  throw new ProtobufDecodeError(`truncated varint at byte ${at}`);
}

/**
 * Decodes a SnapshotResponse; the blob is a view of `bytes`, not a copy. Unknown fields are skipped, as
 * protobuf requires, so a newer etcd's additions (3.6 adds `version`) do not break the stream.
 */
export function decodeSnapshotResponse(bytes: Buffer): SnapshotChunk {
  let remainingBytes = 0;
  let blob: Buffer = EMPTY;
  let at = 0;
  while (at < bytes.length) {
    const [key, afterKey] = varint(bytes, at);
    const field = Math.floor(key / 8);
    const wire = key % 8;
    at = afterKey;
    if (wire === 0) {
      const [value, next] = varint(bytes, at);
      if (field === 2) remainingBytes = value;
      at = next;
    } else if (wire === 2) {
      const [length, start] = varint(bytes, at);
      if (start + length > bytes.length) throw new ProtobufDecodeError(`field ${field} runs past the message (${length} bytes at ${start} of ${bytes.length})`);
      if (field === 3) blob = bytes.subarray(start, start + length);
      at = start + length;
    } else if (wire === 1) {
      at += 8;
    } else if (wire === 5) {
      at += 4;
    } else {
      throw new ProtobufDecodeError(`unsupported wire type ${wire} (field ${field})`);
    }
  }
  if (at > bytes.length) throw new ProtobufDecodeError('truncated fixed-width field');
  return { remainingBytes, blob };
}
