import { describe, expect, it } from 'vitest';
import { decodeTyped } from './decode-typed.ts';
import { fields } from './wire.ts';

/** Minimal protobuf writer for the cases below. */
function varint(n: number): number[] {
  const out: number[] = [];
  let v = BigInt.asUintN(64, BigInt(n));
  do {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? byte | 0x80 : byte);
  } while (v > 0n);
  return out;
}
const bytesField = (n: number, payload: Buffer | string): Buffer => {
  const b = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  return Buffer.from([...varint(n * 8 + 2), ...varint(b.length), ...b]);
};
const varintField = (n: number, v: number): Buffer => Buffer.from([...varint(n * 8), ...varint(v)]);

describe('protobuf decoding from the generated descriptors', () => {
  it('decodes ObjectMeta: strings, maps, repeated messages; the zero creationTimestamp is left out', () => {
    const owner = Buffer.concat([bytesField(1, 'CronJob'), bytesField(3, 'cj'), bytesField(4, 'u-1'), bytesField(5, 'batch/v1'), varintField(6, 1)]);
    const meta = Buffer.concat([bytesField(1, 'x'), bytesField(8, Buffer.alloc(0)), bytesField(11, Buffer.concat([bytesField(1, 'app'), bytesField(2, 'x')])), bytesField(13, owner), varintField(7, 0)]);
    expect(decodeTyped('metav1.ObjectMeta', fields(meta))).toEqual({ name: 'x', labels: { app: 'x' }, ownerReferences: [{ kind: 'CronJob', name: 'cj', uid: 'u-1', apiVersion: 'batch/v1', controller: true }] });
  });

  it('keeps the zero of a pointer field (replicas: 0, suspend: false) and drops the zero of an omitempty one (paused)', () => {
    expect(decodeTyped('apps.DeploymentSpec', fields(Buffer.concat([varintField(1, 0), varintField(7, 0)])))).toEqual({ replicas: 0 });
    expect(decodeTyped('batch.CronJobSpec', fields(Buffer.concat([bytesField(1, '@daily'), varintField(4, 0)])))).toEqual({ schedule: '@daily', suspend: false });
  });

  it('reads negative integers, quantities and int-or-string values', () => {
    const limits = bytesField(1, Buffer.concat([bytesField(1, 'memory'), bytesField(2, bytesField(1, '128Mi'))]));
    expect(decodeTyped('v1.ResourceRequirements', fields(limits))).toEqual({ limits: { memory: '128Mi' } });
    expect(decodeTyped('v1.SecurityContext', fields(varintField(4, -1)))).toEqual({ runAsUser: -1 });
    const probe = bytesField(2, Buffer.concat([bytesField(1, '/healthz'), bytesField(2, Buffer.concat([varintField(1, 1), bytesField(3, 'http')]))]));
    expect(decodeTyped('v1.ProbeHandler', fields(probe))).toEqual({ httpGet: { path: '/healthz', port: 'http' } });
  });

  it('refuses a field number the descriptor does not know, rather than dropping it', () => {
    expect(() => decodeTyped('batch.CronJobSpec', fields(bytesField(99, 'x')))).toThrow('unknown field 99 of batch.CronJobSpec');
  });
});
