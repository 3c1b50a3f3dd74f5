import { describe, expect, it } from 'vitest';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import { isTransientError, KubeRequestError } from '../../src/kube/kube-client.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { realClock, type Clock } from '../../src/runtime/clock.ts';
import { MigrationRefusedError } from '../../src/migration/migration-target.ts';
import { resolveRetryPolicy } from '../../src/migration/retry-policy.ts';
import { rewriteObject, type RewriteContext } from '../../src/migration/rewrite-object.ts';

const gr = { group: 'example.com', resource: 'gadgets' };
const obj = (rv: string): KubeObject => ({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g', namespace: 'ns', resourceVersion: rv } });

type Answer = KubeObject | Error;

/** A client that answers from a script and fails the test on any call beyond it. */
function scripted(script: Array<['get' | 'update', Answer]>): { client: RewriteContext['client']; calls: string[] } {
  const calls: string[] = [];
  const answer = async (verb: 'get' | 'update', detail: string): Promise<KubeObject> => {
    calls.push(`${verb} ${detail}`);
    const next = script.shift();
    if (!next || next[0] !== verb) throw new Error(`unexpected ${verb} ${detail} (script: ${next?.[0] ?? 'empty'})`);
    if (next[1] instanceof Error) throw next[1];
    return next[1];
  };
  return {
    calls,
    client: {
      get: (ref) => answer('get', `${ref.namespace}/${ref.name}`),
      update: (o) => answer('update', `rv=${o.metadata.resourceVersion}`),
    },
  };
}

/** Records waits instead of waiting. */
function recordingClock(): Clock & { waits: number[] } {
  const waits: number[] = [];
  return { ...realClock, waits, sleep: async (ms: number) => void waits.push(ms) };
}

const context = (client: RewriteContext['client'], clock: Clock): RewriteContext => ({ client, clock, retry: resolveRetryPolicy({ maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000 }) });

describe('rewriteObject', () => {
  it('calls an object rewritten when the PUT gives it a new resourceVersion, current when the server kept it', async () => {
    const clock = recordingClock();
    expect(await rewriteObject(obj('5'), context(scripted([['update', obj('9')]]).client, clock))).toEqual({ result: 'rewritten' });
    expect(await rewriteObject(obj('5'), context(scripted([['update', obj('5')]]).client, clock))).toEqual({ result: 'current' });
  });

  it('reads the newest copy after a 409 and PUTs that, without waiting', async () => {
    const clock = recordingClock();
    const { client, calls } = scripted([['update', new ApiStatusError(statusErrors.conflict(gr, 'g'))], ['get', obj('7')], ['update', obj('8')]]);
    expect(await rewriteObject(obj('5'), context(client, clock))).toEqual({ result: 'rewritten' });
    expect(calls).toEqual(['update rv=5', 'get ns/g', 'update rv=7']);
    expect(clock.waits).toEqual([]);
  });

  it.each<[string, Array<['get' | 'update', Answer]>]>([
    ['the PUT', [['update', new ApiStatusError(statusErrors.notFound(gr, 'g'))]]],
    ['the read after a conflict', [['update', new ApiStatusError(statusErrors.conflict(gr, 'g'))], ['get', new ApiStatusError(statusErrors.notFound(gr, 'g'))]]],
  ])('calls an object gone when %s answers 404', async (_, script) => {
    expect(await rewriteObject(obj('5'), context(scripted(script).client, recordingClock()))).toEqual({ result: 'gone' });
  });

  it('retries transient errors with backoff, honouring Retry-After', async () => {
    const clock = recordingClock();
    const { client } = scripted([
      ['update', new ApiStatusError(statusErrors.tooManyRequests(3))],
      ['update', new ApiStatusError(statusErrors.internalError('etcd leader changed'))],
      ['update', new KubeRequestError('PUT /x: connect ECONNREFUSED')],
      ['update', obj('6')],
    ]);
    expect(await rewriteObject(obj('5'), context(client, clock))).toEqual({ result: 'rewritten' });
    expect(clock.waits).toEqual([1_000, 200, 400]);
  });

  it('skips at once an object the server refuses as it is (422), fails at once on a refusal of the caller (403), and after the last attempt on a transient one', async () => {
    const invalid = new ApiStatusError(statusErrors.invalid({ group: 'example.com', kind: 'Gadget' }, 'g', [{ field: 'spec.size', message: 'Invalid value: -1' }]));
    expect(await rewriteObject(obj('5'), context(scripted([['update', invalid]]).client, recordingClock()))).toEqual({
      result: 'skipped', code: 422, message: 'Gadget.example.com "g" is invalid: spec.size: Invalid value: -1',
    });
    const forbidden = new ApiStatusError(statusErrors.forbidden('migrator', 'update', { group: 'example.com', resource: 'gadgets' }, 'ns', 'g'));
    expect(await rewriteObject(obj('5'), context(scripted([['update', forbidden]]).client, recordingClock()))).toMatchObject({ result: 'failed', code: 403, attempts: 1 });
    const down = new ApiStatusError(statusErrors.serviceUnavailable());
    expect(await rewriteObject(obj('5'), context(scripted([['update', down], ['update', down], ['update', down], ['update', down]]).client, recordingClock()))).toEqual({
      result: 'failed', code: 503, message: 'the server is currently unable to handle the request', attempts: 4,
    });
  });

  it('throws the abort reason instead of reporting a failure', async () => {
    const abort = new AbortController();
    const reason = new Error('SIGTERM');
    const client: RewriteContext['client'] = { get: async () => obj('1'), update: async () => { abort.abort(reason); throw new KubeRequestError('PUT: aborted'); } };
    await expect(rewriteObject(obj('5'), { ...context(client, recordingClock()), signal: abort.signal })).rejects.toBe(reason);
  });
});

describe('isTransientError, as the migrator retries by it', () => {
  const status = (code: number): ApiStatusError => new ApiStatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code });
  it.each<[string, unknown, boolean]>([
    ...[401, 408, 429, 500, 503, 504].map((code): [string, unknown, boolean] => [`HTTP ${code}`, status(code), true]),
    ...[400, 403, 404, 409, 410, 422].map((code): [string, unknown, boolean] => [`HTTP ${code}`, status(code), false]),
    ['no answer (KubeRequestError)', new KubeRequestError('GET /x: socket hang up'), true],
    ['a refusal of the migrator', new MigrationRefusedError('CRD x: the storage version changed'), false],
    ['a bug', new TypeError('x is undefined'), false],
  ])('%s: %s', (_, err, transient) => {
    expect(isTransientError(err)).toBe(transient);
  });
});
