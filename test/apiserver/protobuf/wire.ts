/** The protobuf wire format (varints, length-delimited fields) as Kubernetes' gogo-generated codecs write it. */

/** The fields of one message by number; a repeated field has several values. */
export type Fields = Map<number, (Buffer | number)[]>;

/** A varint as a signed 64-bit integer (negative int32/int64 values are ten-byte varints, beyond a double's precision). */
function readVarint(buf: Buffer, pos: number): [number, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const byte = buf[pos++];
    if (byte === undefined) throw new Error('truncated varint');
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [Number(BigInt.asIntN(64, result)), pos];
    shift += 7n;
  }
}

/** Splits a message into its fields (varints as numbers, length-delimited values as buffers). */
export function fields(buf: Buffer): Fields {
  const out: Fields = new Map();
  let pos = 0;
  while (pos < buf.length) {
    const [key, p1] = readVarint(buf, pos);
    pos = p1;
    const field = Math.floor(key / 8);
    const wire = key & 7;
    let value: Buffer | number;
    if (wire === 0) [value, pos] = readVarint(buf, pos);
    else if (wire === 2) {
      const [len, p2] = readVarint(buf, pos);
      value = buf.subarray(p2, p2 + len);
      pos = p2 + len;
    } else if (wire === 1) {
      value = buf.subarray(pos, pos + 8);
      pos += 8;
    } else if (wire === 5) {
      value = buf.subarray(pos, pos + 4);
      pos += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
    const list = out.get(field) ?? [];
    list.push(value);
    out.set(field, list);
  }
  return out;
}
