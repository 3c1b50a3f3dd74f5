import { describe, expect, it } from 'vitest';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { createLogger } from '../../src/runtime/logger.ts';
import { ServedResource } from '../../src/runtime/served-resource.ts';

const RESTORES = { group: 'kubelings.dev', version: 'v1', plural: 'restores', kind: 'Restore', namespaced: true } as const;
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Discovery answering from `answers` in turn (the last one again and again), recording each path asked. */
function setup(answers: (() => unknown)[]) {
  const clock = new FakeClock();
  const paths: string[] = [];
  const lines: { level: string; msg: string }[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(JSON.parse(line) as { level: string; msg: string }) } });
  const client = {
    request: async <T>(_method: string, path: string): Promise<T> => {
      paths.push(path);
      return answers[Math.min(paths.length, answers.length) - 1]!() as T;
    },
  };
  const served = new ServedResource({ client, resource: RESTORES, hint: 'apply its CRD', clock, logger, backoff: { random: () => 0 } });
  return { clock, paths, lines, served };
}

const listing = (...names: string[]) => () => ({ kind: 'APIResourceList', groupVersion: 'kubelings.dev/v1', resources: names.map((name) => ({ name })) });
const notFound = () => { throw new ApiStatusError(statusErrors.notFound({ group: '', resource: '' }, '/apis/kubelings.dev/v1')); };

describe('ServedResource', () => {
  it('resolves at once when discovery lists the resource', async () => {
    const { paths, served } = setup([listing('backupschedules', 'restores')]);
    await served.served(new AbortController().signal);
    expect(paths).toEqual(['/apis/kubelings.dev/v1']);
    expect(served.problem()).toBeUndefined();
  });

  it('reads discovery again after a growing backoff until the resource is listed, saying why once at error level', async () => {
    const { clock, paths, lines, served } = setup([notFound, listing('backupschedules'), listing('backupschedules'), listing('backupschedules', 'restores')]);
    let done = false;
    const signal = new AbortController().signal;
    void served.served(signal).then(() => (done = true));
    await settle();
    expect(served.problem()).toBe('the API server does not serve restores.kubelings.dev/v1 (no /apis/kubelings.dev/v1 in discovery)');
    clock.step(800);
    await settle();
    expect(served.problem()).toBe('the API server does not serve restores.kubelings.dev/v1 (discovery of /apis/kubelings.dev/v1 does not list restores)');
    clock.step(1_599);
    await settle();
    expect(paths).toHaveLength(2);
    clock.step(1);
    await settle();
    clock.step(3_200);
    await settle();
    expect(done).toBe(true);
    expect(paths).toHaveLength(4);
    expect(served.problem()).toBeUndefined();
    expect(lines.filter((l) => l.level === 'error').map((l) => l.msg)).toEqual(['the API server does not serve restores.kubelings.dev/v1 (no /apis/kubelings.dev/v1 in discovery): apply its CRD']);
    expect(lines.at(-1)).toMatchObject({ level: 'info', msg: 'the API server serves restores.kubelings.dev/v1 now' });
  });

  it('names a discovery it cannot read, and rejects a waiter whose signal aborts', async () => {
    const { served } = setup([() => { throw new Error('connect ECONNREFUSED'); }]);
    const stop = new AbortController();
    const waiting = served.served(stop.signal);
    await settle();
    expect(served.problem()).toBe('cannot read discovery /apis/kubelings.dev/v1: connect ECONNREFUSED');
    stop.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
  });
});
