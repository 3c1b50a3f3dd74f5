/** The chaos harness's own checkers catch what they are there to catch (pure parts, no servers). */
import { describe, expect, it } from 'vitest';
import { childNameFor } from '../../src/pure/names.ts';
import type { RequestLogEntry } from '../apiserver/index.ts';
import { ChangeLatency, countAfter, gaugeValue, histogramQuantileMs, slope } from './latency.ts';
import { nonLeaderWrites, takeovers } from './leadership.ts';
import { Rng } from './random.ts';
import { formatTable } from './table.ts';

const at = (ms: number) => new Date(Date.UTC(2026, 10, 30) + ms).toISOString();
const entry = (ms: number, user: string, verb: string, resource: string, extra: Partial<RequestLogEntry> = {}): RequestLogEntry =>
  ({ time: at(ms), user, verb, apiGroup: '', apiVersion: 'v1', resource, code: 200, ...extra });

describe('leadership from the request log', () => {
  const users = new Set(['a', 'b']);

  it('flags a write by a replica while the last successful Lease write was the other one', () => {
    const log = [
      entry(0, 'a', 'update', 'leases'),
      entry(10, 'a', 'create', 'cronjobs', { name: 'x' }),
      entry(20, 'b', 'update', 'leases', { code: 409 }),
      entry(30, 'b', 'create', 'cronjobs', { name: 'y' }),
      entry(40, 'b', 'update', 'leases'),
      entry(50, 'b', 'update', 'backupschedules', { subresource: 'status' }),
      entry(60, 'a', 'get', 'cronjobs'),
    ];
    expect(nonLeaderWrites(log, users).map((e) => e.name)).toEqual(['y']);
  });

  it('measures each kill, and the dead leader\'s last renewal, to the next successful Lease write by another replica; undefined when nobody took over', () => {
    const log = [
      entry(0, 'a', 'update', 'leases'),
      entry(2_000, 'a', 'update', 'leases'),
      entry(17_300, 'b', 'update', 'leases', { code: 409 }),
      entry(18_000, 'b', 'update', 'leases'),
      entry(19_000, 'b', 'update', 'leases'),
    ];
    const base = Date.parse(at(0));
    expect(takeovers(log, users, [{ atMs: base + 2_500, user: 'a' }, { atMs: base + 20_000, user: 'b' }])).toEqual([{ afterKillMs: 15_500, afterLastRenewalMs: 16_000 }, undefined]);
  });

  it('shows a takeover before the Lease expired as a short time since the last renewal', () => {
    const log = [entry(0, 'a', 'update', 'leases'), entry(4_000, 'b', 'update', 'leases')];
    const base = Date.parse(at(0));
    expect(takeovers(log, users, [{ atMs: base + 1_000, user: 'a' }])).toEqual([{ afterKillMs: 3_000, afterLastRenewalMs: 4_000 }]);
  });
});

describe('ChangeLatency', () => {
  it('pairs the first unanswered change of a schedule with the next write to its child, across batches', () => {
    const latency = new ChangeLatency('admin', 'ctl');
    latency.add([entry(0, 'admin', 'patch', 'backupschedules', { name: 's1' }), entry(3, 'admin', 'patch', 'backupschedules', { name: 's1' })]);
    latency.add([entry(5, 'ctl', 'update', 'backupschedules', { name: 's1', subresource: 'status' })]);
    expect(latency.pending).toBe(1);
    latency.add([entry(12, 'ctl', 'update', 'cronjobs', { name: childNameFor('s1') }), entry(20, 'admin', 'patch', 'backupschedules', { name: 's2' })]);
    expect([latency.count, latency.pending, latency.quantile(0.99)]).toEqual([1, 1, 12]);
  });

  it('keeps the arrival time of each change slower than the threshold', () => {
    const latency = new ChangeLatency('admin', 'ctl', 10);
    latency.add([entry(0, 'admin', 'patch', 'backupschedules', { name: 's1' }), entry(1, 'admin', 'patch', 'backupschedules', { name: 's2' })]);
    latency.add([entry(5, 'ctl', 'update', 'cronjobs', { name: childNameFor('s1') }), entry(30, 'ctl', 'update', 'cronjobs', { name: childNameFor('s2') })]);
    expect(latency.slow).toEqual([Date.parse(entry(1, 'admin', 'patch', 'backupschedules', { name: 's2' }).time)]);
  });
});

describe('countAfter', () => {
  it('counts the times within the window after some start, whatever the order of the starts', () => {
    expect(countAfter([5, 12, 25, 39, 41], [40, 0, 20], 10)).toBe(3);
    expect(countAfter([5], [], 10)).toBe(0);
    expect(countAfter([-1], [0], 10)).toBe(0);
  });
});

describe('metrics arithmetic', () => {
  it('takes the histogram quantile over the observations between two scrapes only', () => {
    const text = (a: number, b: number, inf: number) =>
      [`h_bucket{c="x",le="0.01"} ${a}`, `h_bucket{c="x",le="0.1"} ${b}`, `h_bucket{c="x",le="+Inf"} ${inf}`].join('\n');
    // Before: 100 slow observations; between the scrapes: 100 fast ones.
    expect(histogramQuantileMs(text(0, 0, 100), text(100, 100, 200), 'h', 'c="x"', 0.99)).toBe(10);
    expect(histogramQuantileMs('', text(100, 100, 200), 'h', 'c="x"', 0.99)).toBe(Number.POSITIVE_INFINITY);
    expect(histogramQuantileMs('', '', 'h', 'c="x"', 0.99)).toBeUndefined();
  });

  it('reads an unlabelled gauge, not one whose name only starts the same', () => {
    const text = '# HELP nodejs_heap_size_used_bytes x\nnodejs_heap_size_used_bytes_total 1\nnodejs_heap_size_used_bytes 52428800\n';
    expect(gaugeValue(text, 'nodejs_heap_size_used_bytes')).toBe(52428800);
    expect(gaugeValue(text, 'nodejs_external_memory_bytes')).toBeUndefined();
  });

  it('finds a positive RSS trend and a flat one', () => {
    expect(slope([{ minutes: 0, mib: 100 }, { minutes: 1, mib: 102 }, { minutes: 2, mib: 104 }])).toBeCloseTo(2);
    expect(slope([{ minutes: 0, mib: 100 }, { minutes: 1, mib: 101 }, { minutes: 2, mib: 100 }])).toBeCloseTo(0);
  });
});

describe('Rng', () => {
  it('replays the same draws for the same seed, and forks independent streams', () => {
    const draws = (r: Rng) => [r.int(0, 1000), r.float(), r.pick(['a', 'b', 'c']), r.shuffle([1, 2, 3, 4]).join('')];
    expect(draws(new Rng(42))).toEqual(draws(new Rng(42)));
    expect(draws(new Rng(42))).not.toEqual(draws(new Rng(43)));
    expect(draws(new Rng(42).fork(1))).not.toEqual(draws(new Rng(42).fork(2)));
  });
});

describe('the chaos table', () => {
  it('replays a failing row with the run\'s own sizes', () => {
    const failed = { id: 'R2', done: 'x', invariants: [], writes: '-', figures: {}, seconds: 1, seed: 7, failures: ['not converged'] };
    expect(formatTable([failed], ['--reduced'])).toContain('replay: npm run chaos -- --reduced --only R2 --seed 7');
    expect(formatTable([{ ...failed, failures: [] }], ['--reduced'])).not.toContain('replay');
  });
});
