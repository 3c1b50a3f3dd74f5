/**
 * The backup-outcome metrics at N schedules (default 10,000): heap they add and the time of a /metrics
 * scrape (prom-client's text exposition of the whole registry, as the metrics server serves it), with
 * every schedule carrying a success, a failure, both run counters and an expected interval (the most
 * series a schedule can have).
 *
 *   npm exec -- tsx --expose-gc bench/outcome-metrics-bench.ts -- --schedules 10000
 */
import { parseArgs } from 'node:util';
import { Registry } from 'prom-client';
import { OutcomeMetrics } from '../src/controller/backupschedule/outcome-metrics.ts';
import type { BackupScheduleObject } from '../src/controller/resources.ts';
import { realClock } from '../src/runtime/clock.ts';
import { median } from './stats.ts';

const { values } = parseArgs({ options: { schedules: { type: 'string' } }, allowPositionals: true });
const n = Number(values.schedules ?? '10000');
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const registry = new Registry();
const metrics = new OutcomeMetrics(registry, realClock);
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
const scrapes: number[] = [];
let bytes = 0;
for (let i = 0; i < 5; i++) {
  const t = performance.now();
  bytes = (await registry.metrics()).length;
  scrapes.push(performance.now() - t);
}
// An unchanged status costs a map lookup: what every resync or restart reconcile does.
const t = performance.now();
for (let i = 0; i < n; i++) {
  const schedule = { metadata: { namespace: `team-${i % 100}`, name: `schedule-${i}` }, spec: { schedule: `${i % 60} ${i % 24} * * *` } } as unknown as BackupScheduleObject;
  metrics.observed(schedule, { lastSuccessfulTime: '2026-12-01T02:03:00Z', lastFailedTime: '2026-11-30T02:03:00Z' }, []);
}
const unchangedUs = ((performance.now() - t) * 1000) / n;
console.log(JSON.stringify({ schedules: n, series: n * 5, heapMiB: Math.round(heapMiB * 10) / 10, firstObserveMs: Math.round(observeMs), scrapeMsMedian: Math.round(median(scrapes)), scrapeMsAll: scrapes.map(Math.round), exposedKiB: Math.round(bytes / 1024), unchangedObserveUs: Math.round(unchangedUs * 100) / 100 }));
