/**
 * The backup-outcome metrics at N schedules (default 10,000): heap they add, the time of a /metrics
 * scrape (the exposition the metrics server serves) and the longest the event loop was held during
 * it (what a reconcile waiting behind the scrape feels), with every schedule carrying a success, a
 * failure, both run counters and an expected interval (the most series a schedule can have). In the
 * same run, the same series as prom-client metrics (how they were kept before 0.3.1) for the ratio.
 *
 *   npm exec -- tsx --expose-gc bench/outcome-metrics-bench.ts --schedules 10000
 */
import { parseArgs } from 'node:util';
import { Counter, Gauge, Registry } from 'prom-client';
import { OutcomeMetrics } from '../src/controller/backupschedule/outcome-metrics.ts';
import type { BackupScheduleObject } from '../src/controller/resources.ts';
import { realClock } from '../src/runtime/clock.ts';
import { RuntimeMetrics } from '../src/runtime/metrics.ts';
import { median } from './stats.ts';

const { values } = parseArgs({ options: { schedules: { type: 'string' } }, allowPositionals: true });
const n = Number(values.schedules ?? '10000');
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const runtime = new RuntimeMetrics({ processMetrics: false });
const metrics = new OutcomeMetrics(runtime, realClock);
gc();
const before = process.memoryUsage().heapUsed;
const started = performance.now();
for (let i = 0; i < n; i++) {
  const schedule = { metadata: { namespace: `team-${i % 100}`, name: `schedule-${i}` }, spec: { schedule: `${i % 60} ${i % 24} * * *` } } as unknown as BackupScheduleObject;
  metrics.observed(schedule, { lastSuccessfulTime: '2026-12-01T02:03:00Z', lastFailedTime: '2026-11-30T02:03:00Z' }, [{ job: `schedule-${i}-1`, completionTime: '2026-12-01T02:03:00Z', result: 'Succeeded' }, { job: `schedule-${i}-0`, completionTime: '2026-11-30T02:03:00Z', result: 'Failed' }]);
}
const observeMs = performance.now() - started;
gc();
const heapMiB = (process.memoryUsage().heapUsed - before) / 2 ** 20;

/** Runs `scrape` 5 times: its wall time and the longest gap a 1 ms timer saw meanwhile (the event loop held). */
async function measure(scrape: () => Promise<string>): Promise<{ scrapeMs: number[]; heldMs: number[]; bytes: number }> {
  const scrapeMs: number[] = [];
  const heldMs: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 5; i++) {
    let last = performance.now();
    let held = 0;
    const probe = setInterval(() => {
      const now = performance.now();
      held = Math.max(held, now - last);
      last = now;
    }, 1);
    const t = performance.now();
    bytes = (await scrape()).length;
    scrapeMs.push(performance.now() - t);
    held = Math.max(held, performance.now() - last);
    clearInterval(probe);
    heldMs.push(held);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { scrapeMs, heldMs, bytes };
}

const served = await measure(() => runtime.text());
// The same series as prom-client metrics, rendered by its registry in one pass.
const registry = new Registry();
const labelNames = ['namespace', 'name'];
const promSeries = [0, 1, 2].map((i) => new Gauge({ name: `g${i}`, help: 'h', labelNames, registers: [registry] }));
const promRuns = new Counter({ name: 'runs_total', help: 'h', labelNames: [...labelNames, 'result'], registers: [registry] });
for (let i = 0; i < n; i++) {
  const labels = { namespace: `team-${i % 100}`, name: `schedule-${i}` };
  for (const g of promSeries) g.set(labels, 1764633600);
  promRuns.inc({ ...labels, result: 'Succeeded' });
  promRuns.inc({ ...labels, result: 'Failed' });
}
const promClient = await measure(() => registry.metrics());
// An unchanged status costs a map lookup: what every resync or restart reconcile does.
const t = performance.now();
for (let i = 0; i < n; i++) {
  const schedule = { metadata: { namespace: `team-${i % 100}`, name: `schedule-${i}` }, spec: { schedule: `${i % 60} ${i % 24} * * *` } } as unknown as BackupScheduleObject;
  metrics.observed(schedule, { lastSuccessfulTime: '2026-12-01T02:03:00Z', lastFailedTime: '2026-11-30T02:03:00Z' }, []);
}
const unchangedUs = ((performance.now() - t) * 1000) / n;
const round = (ms: number): number => Math.round(ms * 10) / 10;
console.log(
  JSON.stringify({
    schedules: n,
    series: n * 5,
    heapMiB: round(heapMiB),
    firstObserveMs: Math.round(observeMs),
    scrapeMsMedian: round(median(served.scrapeMs)),
    loopHeldMsMedian: round(median(served.heldMs)),
    loopHeldMsAll: served.heldMs.map(round),
    exposedKiB: Math.round(served.bytes / 1024),
    promClientScrapeMsMedian: round(median(promClient.scrapeMs)),
    promClientLoopHeldMsMedian: round(median(promClient.heldMs)),
    loopHeldRatio: Number((median(served.heldMs) / median(promClient.heldMs)).toFixed(3)),
    unchangedObserveUs: Math.round(unchangedUs * 100) / 100,
  }),
);
