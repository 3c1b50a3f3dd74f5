import { describe, expect, it } from 'vitest';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import type { KubeList, KubeObject } from '../../src/kube/object.ts';
import type { ListOptions } from '../../src/kube/resource-client.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { resolveRetryPolicy } from '../../src/migration/retry-policy.ts';
import { storedObjects, type StoredObjectsOptions } from '../../src/migration/stored-objects.ts';

const item = (name: string): KubeObject => ({ metadata: { name, namespace: 'ns' } });
const page = (names: string[], next?: string): KubeList<KubeObject> => ({ metadata: { ...(next ? { continue: next } : {}), remainingItemCount: 0 }, items: names.map(item) });
const expired = (inconsistent?: string): ApiStatusError =>
  new ApiStatusError({ ...statusErrors.expired('The provided continue parameter is too old to display a consistent list result.'), ...(inconsistent ? { metadata: { continue: inconsistent } } : {}) });

/** A LIST that answers by continue token from `pages` (each answer used once) and records the tokens asked for. */
function lister(pages: Record<string, Array<KubeList<KubeObject> | Error>>): { options: Pick<StoredObjectsOptions, 'client'>; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    options: {
      client: {
        typeMeta: () => ({ apiVersion: 'example.com/v1', kind: 'Gadget' }),
        list: async (o: ListOptions = {}) => {
          const token = o.continue ?? '';
          asked.push(token);
          const answer = pages[token]?.shift();
          if (!answer) throw new Error(`unexpected LIST continue=${JSON.stringify(token)}`);
          if (answer instanceof Error) throw answer;
          return answer;
        },
      },
    },
  };
}

async function collect(options: StoredObjectsOptions): Promise<string[]> {
  const names: string[] = [];
  for await (const obj of storedObjects(options)) names.push(`${obj.metadata.name}:${obj.apiVersion}`);
  return names;
}

const base = { clock: { ...realClock, sleep: async () => undefined }, pageSize: 2, retry: resolveRetryPolicy({ maxAttempts: 3 }) };

describe('storedObjects', () => {
  it('yields every page in order, typed, and asks for the next page before the current one is consumed', async () => {
    const { options, asked } = lister({ '': [page(['a', 'b'], 't1')], t1: [page(['c', 'd'], 't2')], t2: [page(['e'])] });
    const it = storedObjects({ ...base, ...options });
    expect((await it.next()).value?.metadata.name).toBe('a');
    expect(asked).toEqual(['', 't1']);
    const rest: string[] = [];
    for await (const obj of it) rest.push(`${obj.metadata.name}:${obj.apiVersion}`);
    expect(rest).toEqual(['b:example.com/v1', 'c:example.com/v1', 'd:example.com/v1', 'e:example.com/v1']);
  });

  it('goes on from the inconsistent continue token of a 410, or starts over when there is none', async () => {
    const resumed: boolean[] = [];
    const onExpired = (_: unknown, r: boolean): void => void resumed.push(r);
    const withToken = lister({ '': [page(['a', 'b'], 't1')], t1: [expired('i1')], i1: [page(['c'])] });
    expect(await collect({ ...base, ...withToken.options, onExpired })).toEqual(['a', 'b', 'c'].map((n) => `${n}:example.com/v1`));
    expect(withToken.asked).toEqual(['', 't1', 'i1']);
    const without = lister({ '': [page(['a', 'b'], 't1'), page(['a', 'b'], 't3')], t1: [expired()], t3: [page(['c'])] });
    expect(await collect({ ...base, ...without.options, onExpired })).toEqual(['a', 'b', 'a', 'b', 'c'].map((n) => `${n}:example.com/v1`));
    expect(resumed).toEqual([true, false]);
  });

  it('retries a page on a transient error, and gives up when the LIST keeps expiring', async () => {
    const flaky = lister({ '': [new ApiStatusError(statusErrors.serviceUnavailable()), page(['a'])] });
    expect(await collect({ ...base, ...flaky.options })).toEqual(['a:example.com/v1']);
    const expiring = lister({ '': [page(['a'], 't'), page(['a'], 't')], t: [expired(), expired()] });
    await expect(collect({ ...base, ...expiring.options, maxRestarts: 1 })).rejects.toThrow('too old to display a consistent list result');
  });
});
