import fc from 'fast-check';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { decodeSnapshotResponse, encodeSnapshotRequest, ETCD_SNAPSHOT_PROTO, ProtobufDecodeError } from '../../src/backup/etcd-rpc-proto.ts';

const root = protobuf.parse(ETCD_SNAPSHOT_PROTO).root;
const SnapshotResponse = root.lookupType('etcdserverpb.SnapshotResponse');
const SnapshotRequest = root.lookupType('etcdserverpb.SnapshotRequest');

describe('etcd Maintenance.Snapshot wire format', () => {
  it('encodes the SnapshotRequest exactly as protobufjs does', () => {
    expect(encodeSnapshotRequest()).toEqual(Buffer.from(SnapshotRequest.encode({}).finish()));
  });

  it('decodes every SnapshotResponse protobufjs encodes (header, remaining bytes up to 2^53, blob)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.maxSafeNat(), fc.option(fc.record({ clusterId: fc.nat(), memberId: fc.nat(), revision: fc.nat(), raftTerm: fc.nat() }), { nil: undefined }), (blob, remaining, header) => {
        const bytes = Buffer.from(SnapshotResponse.encode({ blob, remainingBytes: remaining, ...(header ? { header } : {}) }).finish());
        const decoded = decodeSnapshotResponse(bytes);
        expect(decoded.remainingBytes).toBe(remaining);
        expect(decoded.blob.equals(Buffer.from(blob))).toBe(true);
      }),
    );
  });

  it('skips unknown fields (a newer etcd) and rejects a truncated message', () => {
    // Field 4 (varint 7), then field 3 = "ab", then field 5 (bytes "x").
    expect(decodeSnapshotResponse(Buffer.from([0x20, 0x07, 0x1a, 0x02, 0x61, 0x62, 0x2a, 0x01, 0x78]))).toEqual({ remainingBytes: 0, blob: Buffer.from('ab') });
    expect(() => decodeSnapshotResponse(Buffer.from([0x1a, 0x05, 0x61]))).toThrow(ProtobufDecodeError);
    expect(() => decodeSnapshotResponse(Buffer.from([0x10, 0xff]))).toThrow(/truncated varint/);
  });
});
