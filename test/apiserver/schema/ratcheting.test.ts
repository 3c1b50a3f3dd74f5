import { describe, expect, it } from 'vitest';
import { ratchetCauses } from './ratcheting.ts';

const cause = (field: string) => ({ reason: 'FieldValueInvalid', message: `Invalid value at ${field}`, field });

describe('ratchetCauses', () => {
  const old = { spec: { schedule: 'every night', source: { etcd: { endpoints: ['ftp://x'] } } }, status: {} };

  it('drops errors at fields whose value did not change (a status write on an object that became invalid)', () => {
    const obj = { ...old, status: { ready: true } };
    expect(ratchetCauses([cause('spec.schedule'), cause('spec.source.etcd.endpoints[0]')], obj, old)).toEqual([]);
  });

  it('keeps errors at fields the update changed', () => {
    const obj = { ...old, spec: { ...old.spec, schedule: 'still wrong' } };
    expect(ratchetCauses([cause('spec.schedule'), cause('spec.source.etcd.endpoints[0]')], obj, old)).toEqual([cause('spec.schedule')]);
  });

  it('keeps an error at a field the update added, and drops one for a required field missing before and after', () => {
    const before = { spec: {} };
    expect(ratchetCauses([cause('spec.retention'), cause('spec.schedule')], { spec: { retention: { keepLast: 0 } } }, before)).toEqual([cause('spec.retention')]);
  });

  it('drops the "rules were not checked" cause only when nothing else is left', () => {
    const unchecked = cause('<nil>');
    expect(ratchetCauses([cause('spec.schedule'), unchecked], old, old)).toEqual([]);
    expect(ratchetCauses([cause('spec.schedule'), unchecked], { spec: { schedule: 'x' } }, old)).toEqual([cause('spec.schedule'), unchecked]);
  });
});
