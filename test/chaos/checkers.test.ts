/** The chaos harness's own checkers catch what they are there to catch (pure parts, no servers). */
import { describe, expect, it } from 'vitest';
import { childNameFor } from '../../src/pure/names.ts';
import type { RequestLogEntry } from '../apiserver/index.ts';
import { ChangeLatency, countAfter, countOverlapping, gaugeValue, histogramQuantileMs, histogramTotals, slope } from './latency.ts';
import { formatLoad, meanLoad, parsePidStat, parseProcStat, samplesAround, type LoadSample } from './machine-load.ts';
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

describe('countOverlapping', () => {
  it('counts the times with a pause running within the window after them', () => {
    const pauses = [{ at: 100, ms: 30 }, { at: 10, ms: 5 }];
    // 90: the pause at 100 begins within 20 ms; 120: inside it; 131: after it ended; 0: the one at 10 begins 10 ms later; 50: none near.
    expect(countOverlapping([90, 120, 131, 0, 50], pauses, 20)).toBe(3);
    expect(countOverlapping([5], [], 20)).toBe(0);
  });
});

describe('machine load', () => {
  it('reads busy, steal and iowait ticks from /proc/stat, and a process\'s CPU ticks whatever its name', () => {
    expect(parseProcStat('cpu  100 5 20 900 7 1 2 3 0 0\ncpu0 1 2 3\n')).toEqual({ busy: 128, steal: 3, iowait: 7 });
    expect(parseProcStat('intr 1 2 3')).toBeUndefined();
    // A name with spaces and a parenthesis: utime and stime are fields 14 and 15.
    expect(parsePidStat('4242 (node (x) y) S 1 2 3 4 5 6 7 8 9 10 250 40 0 0 20 0 1 0')).toBe(290);
    expect(parsePidStat('')).toBeUndefined();
  });

  it('averages the samples and picks the seconds where the tail began', () => {
    const sample = (at: number, busy: number, controller: number): LoadSample => ({ at, busy, steal: 0.1, iowait: 0, processes: { controller }, others: busy - controller });
    const samples = [sample(1000, 1, 0.2), sample(2000, 2, 0.6), sample(3000, 1, 0.2)];
    const mean = meanLoad(samples);
    expect(mean.busy).toBeCloseTo(4 / 3);
    expect(mean.steal).toBeCloseTo(0.1);
    expect(mean.others).toBeCloseTo(1);
    expect(mean.processes['controller']).toBeCloseTo(1 / 3);
    // Three slow changes in (1000, 2000], one in (2000, 3000]: with a minimum of 2, only the second sample.
    expect(samplesAround(samples, [1500, 1600, 2000, 2500], 2)).toEqual([samples[1]]);
    expect(formatLoad(meanLoad([samples[1] as LoadSample]))).toBe('busy 2.00 · steal 0.10 · iowait 0.00 · controller 0.60 · others 1.40');
  });
});

describe('metrics arithmetic', () => {
  it('totals a histogram over its label sets between two scrapes, with the observations over a bucket bound', () => {
    const text = (fast: number, count: number, sum: number) =>
      [`g_bucket{kind="minor",le="0.01"} ${fast}`, `g_bucket{kind="minor",le="+Inf"} ${count}`, `g_sum{kind="minor"} ${sum}`, `g_count{kind="minor"} ${count}`,
        `g_bucket{kind="major",le="0.01"} 0`, `g_bucket{kind="major",le="+Inf"} 1`, `g_sum{kind="major"} 0.05`, `g_count{kind="major"} 1`].join('\n');
    const totals = histogramTotals(text(10, 10, 0.02), text(18, 20, 0.1), 'g', 0.01);
    expect(totals.count).toBe(10);
    expect(totals.sumMs).toBeCloseTo(80);
    expect(totals.over).toBe(2);
    expect(histogramTotals(text(10, 10, 0.02), text(18, 20, 0.1), 'g', 0.01, 'kind="major"')).toEqual({ count: 0, sumMs: 0, over: 0 });
    expect(histogramTotals(text(10, 10, 0.02), text(18, 20, 0.1), 'g', 0.01, 'kind="minor"').over).toBe(2);
  });

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
