/**
 * The backup-outcome metrics on `/metrics`, one series per schedule (label set `namespace`, `name`),
 * removed when the schedule goes:
 * - `backupschedule_last_success_timestamp_seconds`, `backupschedule_last_failure_timestamp_seconds`
 *   (status.lastSuccessfulTime / lastFailedTime; absent until there is one);
 * - `backupschedule_runs_total{result}`: finished runs this process saw added to the status (a counter:
 *   `increase()` over it counts failures whatever restarts happen);
 * - `backupschedule_expected_interval_seconds`: the longest gap between due times (src/pure/expected-interval.ts),
 *   what the alert "no success in 2 intervals" compares against.
 * Cardinality: 4 + 2 series per schedule at most, bounded by the schedules the controller watches
 * (docs/backup-outcomes.md has the 10,000-schedule measurement). They are {@link ObjectSeriesFamily}
 * series, not prom-client metrics, so a scrape never formats them all in one turn of the event loop.
 */
import { objectKey } from '../../kube/object.ts';
import type { BackupRun } from '../../pure/backup-runs.ts';
import { expectedIntervalMs } from '../../pure/expected-interval.ts';
import type { ScheduleStatus } from '../../pure/status.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { RuntimeMetrics } from '../../runtime/metrics.ts';
import type { ObjectSeriesFamily } from '../../runtime/object-series.ts';
import type { BackupScheduleObject } from '../resources.ts';
import type { StatusObserver } from './reconciler-options.ts';

/** Distinct cron expressions whose interval is kept, and for how long. */
const INTERVAL_CACHE_SIZE = 1024;
const INTERVAL_CACHE_MS = 24 * 3_600_000;

const RESULTS: readonly BackupRun['result'][] = ['Succeeded', 'Failed'];

/** What one schedule's series were last set from, so an unchanged status costs a map lookup. */
interface Seen {
  readonly labels: { readonly namespace: string; readonly name: string };
  lastSuccess: string | undefined;
  lastFailure: string | undefined;
  /** `schedule|timeZone` the interval was computed for. */
  cron: string | undefined;
}

function seconds(time: string): number {
  return Date.parse(time) / 1000;
}

/** The metrics, fed by the reconciler (a {@link StatusObserver}). */
export class OutcomeMetrics implements StatusObserver {
  readonly #lastSuccess: ObjectSeriesFamily;
  readonly #lastFailure: ObjectSeriesFamily;
  readonly #runs: ObjectSeriesFamily;
  readonly #interval: ObjectSeriesFamily;
  readonly #clock: Clock;
  readonly #seen = new Map<string, Seen>();
  readonly #intervals = new Map<string, { readonly ms: number | undefined; readonly at: number }>();

  constructor(metrics: RuntimeMetrics, clock: Clock) {
    this.#clock = clock;
    const labelNames = ['namespace', 'name'];
    this.#lastSuccess = metrics.objectSeries('backupschedule_last_success_timestamp_seconds', 'When the schedule\'s last successful backup Job completed (status.lastSuccessfulTime), Unix seconds.', 'gauge', labelNames);
    this.#lastFailure = metrics.objectSeries('backupschedule_last_failure_timestamp_seconds', 'When the schedule\'s last backup Job failed (status.lastFailedTime), Unix seconds.', 'gauge', labelNames);
    this.#runs = metrics.objectSeries('backupschedule_runs_total', 'Finished backup Jobs the controller recorded in the schedule\'s status, by result (Succeeded, Failed).', 'counter', [...labelNames, 'result']);
    this.#interval = metrics.objectSeries('backupschedule_expected_interval_seconds', 'Longest time between two due runs of the schedule\'s cron expression (over its next 16 runs), seconds.', 'gauge', labelNames);
  }

  /** Sets the schedule's series from the status a reconcile computed. */
  observed(schedule: BackupScheduleObject, status: ScheduleStatus, newRuns: readonly BackupRun[]): void {
    const key = objectKey(schedule.metadata);
    let seen = this.#seen.get(key);
    if (!seen) {
      seen = { labels: { namespace: schedule.metadata.namespace ?? '', name: schedule.metadata.name ?? '' }, lastSuccess: undefined, lastFailure: undefined, cron: undefined };
      this.#seen.set(key, seen);
      // Both results exist from the start, so increase() sees the first failure.
      for (const result of RESULTS) this.#runs.inc({ ...seen.labels, result }, 0);
    }
    const { labels } = seen;
    if (status.lastSuccessfulTime !== seen.lastSuccess) {
      seen.lastSuccess = status.lastSuccessfulTime;
      if (seen.lastSuccess) this.#lastSuccess.set(labels, seconds(seen.lastSuccess));
      else this.#lastSuccess.remove(labels);
    }
    if (status.lastFailedTime !== seen.lastFailure) {
      seen.lastFailure = status.lastFailedTime;
      if (seen.lastFailure) this.#lastFailure.set(labels, seconds(seen.lastFailure));
      else this.#lastFailure.remove(labels);
    }
    for (const run of newRuns) this.#runs.inc({ ...labels, result: run.result });
    const cron = `${schedule.spec.schedule}|${schedule.spec.timeZone ?? ''}`;
    if (cron !== seen.cron) {
      seen.cron = cron;
      const ms = this.#intervalOf(cron, schedule.spec.schedule, schedule.spec.timeZone);
      if (ms !== undefined) this.#interval.set(labels, ms / 1000);
      else this.#interval.remove(labels);
    }
  }

  /**
   * The expected interval of a cron schedule, shared by the schedules that use it: computing one costs
   * ~0.4 ms (cron-parser with time zones), which 10,000 schedules would add to a start-up's
   * convergence, while they mostly share a few expressions. Kept a day (a DST change moves nothing
   * that matters to an alert over two intervals), at most INTERVAL_CACHE_SIZE expressions.
   */
  #intervalOf(cron: string, schedule: string, timeZone: string | undefined): number | undefined {
    const now = this.#clock.now();
    const cached = this.#intervals.get(cron);
    if (cached && now - cached.at < INTERVAL_CACHE_MS) return cached.ms;
    const ms = expectedIntervalMs(schedule, timeZone, now);
    this.#intervals.delete(cron);
    // Map order is insertion order: the first key is the oldest entry.
    if (this.#intervals.size >= INTERVAL_CACHE_SIZE) this.#intervals.delete(this.#intervals.keys().next().value!);
    this.#intervals.set(cron, { ms, at: now });
    return ms;
  }

  /** Removes every series of the schedule `key`. */
  gone(key: string): void {
    const seen = this.#seen.get(key);
    if (!seen) return;
    this.#seen.delete(key);
    this.#lastSuccess.remove(seen.labels);
    this.#lastFailure.remove(seen.labels);
    this.#interval.remove(seen.labels);
    for (const result of RESULTS) this.#runs.remove({ ...seen.labels, result });
  }
}
