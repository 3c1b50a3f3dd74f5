/**
 * The subset of etcd's `api/etcdserverpb/rpc.proto` (v3.4, Apache-2.0) the runner calls:
 * Maintenance.Snapshot. Kept as source text so the single-file bundle carries it (no .proto file to
 * find at run time); field numbers and names are etcd's, so the wire format is exactly etcd's.
 */
import protobuf from 'protobufjs';

/** The proto source (package etcdserverpb). */
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

const root = protobuf.parse(ETCD_SNAPSHOT_PROTO, { keepCase: false }).root;
const requestType = root.lookupType('etcdserverpb.SnapshotRequest');
const responseType = root.lookupType('etcdserverpb.SnapshotResponse');
const EMPTY_REQUEST = Buffer.from(requestType.encode(requestType.create({})).finish());

/** Serializes the (empty) SnapshotRequest. */
export function encodeSnapshotRequest(): Buffer {
  return EMPTY_REQUEST;
}

/** Decodes a SnapshotResponse; the blob is a view of `bytes`, not a copy. */
export function decodeSnapshotResponse(bytes: Buffer): SnapshotChunk {
  const message = responseType.decode(bytes) as unknown as { remainingBytes?: number | { toNumber(): number }; blob?: Uint8Array };
  const remaining = message.remainingBytes;
  const blob = message.blob ?? new Uint8Array();
  return {
    remainingBytes: typeof remaining === 'number' ? remaining : (remaining?.toNumber() ?? 0),
    blob: Buffer.isBuffer(blob) ? blob : Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength),
  };
}
