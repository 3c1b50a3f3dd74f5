import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startMetricsServer } from '../../src/runtime/metrics-server.ts';
import { RuntimeMetrics } from '../../src/runtime/metrics.ts';
import { ObjectSeriesFamily } from '../../src/runtime/object-series.ts';

const lines = (family: ObjectSeriesFamily): string[] => [...family.lines()];

describe('ObjectSeriesFamily', () => {
  it('renders each series in the Prometheus text format, escaping help and label values', () => {
    const family = new ObjectSeriesFamily('x_seconds', 'a \\ b\nc', 'gauge', ['namespace', 'name']);
    family.set({ namespace: 'n"s', name: 'a\\b\nc' }, 1764633600.5);
    family.set({ name: 'plain', namespace: 'team' }, Number.NaN);
    family.set({ namespace: 'inf', name: 'up' }, Infinity);
    family.set({ namespace: 'inf', name: 'down' }, -Infinity);
    expect(family.header).toBe('# HELP x_seconds a \\\\ b\\nc\n# TYPE x_seconds gauge\n');
    expect(lines(family)).toEqual([
      'x_seconds{namespace="n\\"s",name="a\\\\b\\nc"} 1764633600.5\n',
      'x_seconds{namespace="team",name="plain"} NaN\n',
      'x_seconds{namespace="inf",name="up"} +Inf\n',
      'x_seconds{namespace="inf",name="down"} -Inf\n',
    ]);
  });

  it('keeps one series per label set: set replaces, inc adds, remove drops it', () => {
    const gauge = new ObjectSeriesFamily('g', 'h', 'gauge', ['name']);
    gauge.set({ name: 'a' }, 1);
    gauge.set({ name: 'a' }, 2);
    gauge.set({ name: 'b' }, 3);
    gauge.remove({ name: 'a' });
    gauge.remove({ name: 'never' });
    expect(lines(gauge)).toEqual(['g{name="b"} 3\n']);
    const counter = new ObjectSeriesFamily('c_total', 'h', 'counter', ['name', 'result']);
    counter.inc({ name: 'a', result: 'Failed' }, 0);
    counter.inc({ name: 'a', result: 'Failed' });
    counter.inc({ name: 'a', result: 'Failed' }, 2);
    expect(lines(counter)).toEqual(['c_total{name="a",result="Failed"} 3\n']);
    expect(counter.size).toBe(1);
  });

  it('refuses what Prometheus would not read or a counter cannot do, naming the metric', () => {
    expect(() => new ObjectSeriesFamily('1bad', 'h', 'gauge', [])).toThrow(/metric name "1bad"/);
    expect(() => new ObjectSeriesFamily('m', 'h', 'gauge', ['__reserved'])).toThrow(/metric m: label name "__reserved"/);
    expect(() => new ObjectSeriesFamily('m', 'h', 'gauge', ['a', 'a'])).toThrow(/label names repeat/);
    const counter = new ObjectSeriesFamily('c_total', 'h', 'counter', ['name']);
    expect(() => counter.inc({ name: 'a' }, -1)).toThrow(/c_total: a counter grows by a finite amount ≥ 0, not -1/);
    expect(() => counter.set({ name: 'a' }, 1)).toThrow(/c_total is a counter/);
    expect(() => counter.inc({ name: 'a', extra: 'x' })).toThrow(/c_total: labels \["name","extra"\] are not exactly \["name"\]/);
    expect(() => counter.inc({ other: 'a' })).toThrow(/not exactly/);
    expect(() => new ObjectSeriesFamily('g', 'h', 'gauge', ['name']).inc({ name: 'a' })).toThrow(/g is a gauge/);
  });

  it('iterates live: a series removed during a scrape is skipped, one added is seen', () => {
    const family = new ObjectSeriesFamily('g', 'h', 'gauge', ['name']);
    for (const name of ['a', 'b', 'c']) family.set({ name }, 1);
    const seen: string[] = [];
    for (const line of family.lines()) {
      seen.push(line);
      if (seen.length === 1) {
        family.remove({ name: 'b' });
        family.set({ name: 'd' }, 2);
      }
    }
    expect(seen).toEqual(['g{name="a"} 1\n', 'g{name="c"} 1\n', 'g{name="d"} 2\n']);
  });
});

describe('RuntimeMetrics with per-object series', () => {
  it('serves the families after the registry, each with its header, and refuses a name twice', async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    metrics.controller('c');
    const family = metrics.objectSeries('per_object_seconds', 'help', 'gauge', ['name']);
    metrics.objectSeries('empty_total', 'help', 'counter', ['name']);
    family.set({ name: 'a' }, 7);
    const text = await metrics.text();
    expect(text).toContain('controller_runtime_active_workers{controller="c"} 0\n');
    expect(text.endsWith('\n# HELP per_object_seconds help\n# TYPE per_object_seconds gauge\nper_object_seconds{name="a"} 7\n')).toBe(true);
    // A family without series is left out, as prom-client leaves out a labelled metric without children.
    expect(text).not.toContain('empty_total');
    expect(() => metrics.objectSeries('per_object_seconds', 'h', 'gauge', [])).toThrow(/already registered/);
    expect(() => metrics.objectSeries('controller_runtime_active_workers', 'h', 'gauge', [])).toThrow(/already registered/);
  });

  // The soak's tail (issue 35): prom-client rendered every per-schedule series in one turn of the
  // event loop (45–105 ms at 5,000 schedules), holding up the reconciles queued behind a scrape.
  it('lets the event loop run between slices of a large scrape, never rendering it all in one turn', async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    const family = metrics.objectSeries('per_object_seconds', 'help', 'gauge', ['namespace', 'name']);
    for (let i = 0; i < 50_000; i++) family.set({ namespace: `team-${i % 100}`, name: `schedule-${i}` }, i);
    let turns = 0;
    let scraping = true;
    const counting = (async () => {
      while (scraping) {
        await nextTurn();
        turns++;
      }
    })();
    const text = await metrics.text();
    scraping = false;
    await counting;
    expect(text.split('\n').filter((l) => l.startsWith('per_object_seconds{'))).toHaveLength(50_000);
    // 50,000 series in slices of 1,000: the loop turned at least once per slice.
    expect(turns).toBeGreaterThanOrEqual(49);
  });

  it('streams the same text over /metrics, and a client leaving mid-scrape harms nothing', async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    const family = metrics.objectSeries('per_object_seconds', 'help', 'gauge', ['name']);
    for (let i = 0; i < 20_000; i++) family.set({ name: `schedule-${i}-${'x'.repeat(100)}` }, i);
    const server = await startMetricsServer({ host: '127.0.0.1', port: 0 }, metrics);
    try {
      const left = new AbortController();
      const res = await fetch(`${server.url}/metrics`, { signal: left.signal });
      left.abort();
      await res.text().catch(() => undefined);
      const full = await fetch(`${server.url}/metrics`);
      expect(full.headers.get('content-type')).toBe(metrics.contentType);
      expect(await full.text()).toBe(await metrics.text());
    } finally {
      await server.close();
    }
  });
});
