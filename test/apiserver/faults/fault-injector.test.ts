import { describe, expect, it } from 'vitest';
import type { AuthorizationAttributes } from '../rbac/index.ts';
import { FaultInjector, seededRandom } from './fault-injector.ts';
import type { FaultRule } from './fault-rule.ts';

const req = (over: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes => ({
  user: { name: 'system:serviceaccount:kubelings:operator', groups: [] },
  verb: 'update',
  apiGroup: 'batch',
  resource: 'cronjobs',
  namespace: 'kubelings',
  name: 'nightly',
  path: '/apis/batch/v1/namespaces/kubelings/cronjobs/nightly',
  isResourceRequest: true,
  ...over,
});

describe('FaultInjector', () => {
  it('fails the next N matching requests and then expires the rule', () => {
    const faults = new FaultInjector();
    faults.add({ verb: 'update', resource: 'cronjobs', code: 409, count: 2 });
    expect(faults.match(req({ verb: 'get' }))).toBeUndefined();
    expect(faults.match(req())?.status?.code).toBe(409);
    expect(faults.list()).toMatchObject([{ count: 1 }]);
    expect(faults.match(req())?.status?.code).toBe(409);
    expect(faults.match(req())).toBeUndefined();
    expect(faults.list()).toEqual([]);
  });

  it.each<[number, Partial<FaultRule>, { reason: string; message: string; retryAfterSeconds?: number }]>([
    [409, {}, { reason: 'Conflict', message: 'Operation cannot be fulfilled on cronjobs.batch "nightly": the object has been modified; please apply your changes to the latest version and try again' }],
    [429, { retryAfterSeconds: 3 }, { reason: 'TooManyRequests', message: 'Too many requests, please try again later.', retryAfterSeconds: 3 }],
    [500, { message: 'etcd is down' }, { reason: 'InternalError', message: 'Internal error occurred: etcd is down' }],
    [503, { retryAfterSeconds: 2 }, { reason: 'ServiceUnavailable', message: 'the server is currently unable to handle the request', retryAfterSeconds: 2 }],
    [504, {}, { reason: 'Timeout', message: 'the server was unable to return a response in the time allotted, but may still be processing the request' }],
  ])('answers code %i with kube status text', (code, extra, expected) => {
    const faults = new FaultInjector();
    faults.add({ code, ...extra });
    const status = faults.match(req())?.status;
    expect(status).toMatchObject({ kind: 'Status', status: 'Failure', code, reason: expected.reason, message: expected.message });
    expect(status?.details?.retryAfterSeconds).toBe(expected.retryAfterSeconds);
  });

  it('matches on every given field and on the user', () => {
    const faults = new FaultInjector();
    faults.add({ verb: 'patch', resource: 'backupschedules', subresource: 'status', namespace: 'a', name: 'x', user: 'bob', code: 500 });
    const base = req({ verb: 'patch', resource: 'backupschedules', subresource: 'status', namespace: 'a', name: 'x', user: { name: 'bob', groups: [] } });
    expect(faults.match({ ...base, subresource: undefined })).toBeUndefined();
    expect(faults.match({ ...base, namespace: 'b' })).toBeUndefined();
    expect(faults.match({ ...base, user: { name: 'alice', groups: [] } })).toBeUndefined();
    expect(faults.match(base)?.status?.code).toBe(500);
  });

  it('adds latency alone or together with a failure', () => {
    const faults = new FaultInjector();
    const slow = faults.add({ verb: 'list', latencyMs: 250 });
    expect(faults.match(req({ verb: 'list' }))).toEqual({ latencyMs: 250 });
    faults.remove(slow);
    faults.add({ verb: 'list', latencyMs: 100, code: 503 });
    expect(faults.match(req({ verb: 'list' }))).toMatchObject({ latencyMs: 100, status: { code: 503 } });
  });

  it('fails a deterministic fraction of requests with a seeded random source', () => {
    const run = () => {
      const faults = new FaultInjector({ random: seededRandom(42) });
      faults.add({ code: 500, fraction: 0.3 });
      return Array.from({ length: 1000 }, () => faults.match(req()) !== undefined);
    };
    const first = run();
    expect(run()).toEqual(first);
    const failed = first.filter(Boolean).length;
    expect(failed).toBeGreaterThan(250);
    expect(failed).toBeLessThan(350);
  });

  it('checks rules in the order added and lists them with ids', () => {
    const faults = new FaultInjector();
    const a = faults.add({ verb: 'update', code: 409 });
    const b = faults.add({ code: 500 });
    expect(faults.match(req())?.status?.code).toBe(409);
    expect(faults.list().map((r) => r.id)).toEqual([a, b]);
    faults.clear();
    expect(faults.match(req())).toBeUndefined();
  });

  it.each<[FaultRule, RegExp]>([
    [{ code: 404 }, /^fault rule: code must be one of 409\|429\|500\|503\|504, got 404$/],
    [{ code: 500, fraction: 1.5 }, /^fault rule: fraction must be a number in \[0, 1\], got 1\.5$/],
    [{ code: 500, count: 0 }, /^fault rule: count must be an integer >= 1, got 0$/],
    [{ latencyMs: -1 }, /^fault rule: latencyMs must be a finite number >= 0, got -1$/],
    [{ code: 429, retryAfterSeconds: 1.5 }, /^fault rule: retryAfterSeconds must be an integer >= 0, got 1\.5$/],
    [{ verb: 'get' }, /^fault rule: needs a code or latencyMs/],
  ])('rejects the malformed rule %j naming the field', (rule, message) => {
    expect(() => new FaultInjector().add(rule)).toThrow(message);
  });
});
