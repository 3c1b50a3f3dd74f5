/**
 * Change → write latency from the request log: for each user change of a BackupSchedule, the time
 * until the controller's next write to its child. Fed in batches (the log is drained as it goes), so
 * a soak of any length fits in bounded memory.
 */
import { childNameFor } from '../../src/pure/names.ts';
import type { RequestLogEntry } from '../apiserver/index.ts';

/** Slow changes whose time is kept: enough to see a pattern, bounded whatever the run. */
const MAX_SLOW = 10_000;

/** Matches user changes to the controller's child writes. */
export class ChangeLatency {
  readonly #changer: string;
  readonly #writer: string;
  /** child name → arrival time of the earliest change not yet answered by a child write. */
  readonly #pending = new Map<string, number>();
  readonly #latencies: number[] = [];
  readonly #slowOver: number;
  /** Arrival times of the changes answered later than `slowOver` ms (at most {@link MAX_SLOW} kept): when the tail happened. */
  readonly slow: number[] = [];

  constructor(changer: string, writer: string, slowOver = Infinity) {
    this.#changer = changer;
    this.#writer = writer;
    this.#slowOver = slowOver;
  }

  /** Feeds entries in arrival order. */
  add(entries: readonly RequestLogEntry[]): void {
    for (const e of entries) {
      const at = Date.parse(e.time);
      if (e.user === this.#changer && e.resource === 'backupschedules' && (e.verb === 'patch' || e.verb === 'update') && !e.subresource && e.code < 300) {
        const child = childNameFor(e.name ?? '');
        if (!this.#pending.has(child)) this.#pending.set(child, at);
      } else if (e.user === this.#writer && e.resource === 'cronjobs' && (e.verb === 'patch' || e.verb === 'update') && e.code < 300) {
        const since = this.#pending.get(e.name ?? '');
        if (since === undefined) continue;
        this.#pending.delete(e.name ?? '');
        this.#latencies.push(at - since);
        if (at - since > this.#slowOver && this.slow.length < MAX_SLOW) this.slow.push(since);
      }
    }
  }

  /** Changes not answered yet. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Number of answered changes. */
  get count(): number {
    return this.#latencies.length;
  }

  /** The `q` quantile (0..1) in ms, nearest rank. */
  quantile(q: number): number {
    if (this.#latencies.length === 0) return Number.NaN;
    const sorted = [...this.#latencies].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
  }
}

/** Least-squares slope of `samples` (x in minutes, y in MiB): MiB per minute. */
export function slope(samples: readonly { minutes: number; mib: number }[]): number {
  const n = samples.length;
  if (n < 2) return 0;
  const mx = samples.reduce((s, p) => s + p.minutes, 0) / n;
  const my = samples.reduce((s, p) => s + p.mib, 0) / n;
  const sxy = samples.reduce((s, p) => s + (p.minutes - mx) * (p.mib - my), 0);
  const sxx = samples.reduce((s, p) => s + (p.minutes - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

/** The value of an unlabelled gauge `name` in a /metrics text, or undefined when absent. */
export function gaugeValue(metrics: string, name: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** The cumulative bucket counts (le → count) of a Prometheus histogram in a /metrics text. */
function buckets(metrics: string, name: string, labels: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of metrics.split('\n')) {
    if (!l.startsWith(`${name}_bucket{`) || !l.includes(labels)) continue;
    const le = l.match(/le="([^"]+)"/)?.[1];
    if (le !== undefined) out.set(le, Number(l.split(' ').pop()));
  }
  return out;
}

/**
 * The upper bound (ms) of the histogram bucket holding the `q` quantile of the observations made
 * between two /metrics texts (`before` may be empty), for `name` with the label text `labels`;
 * undefined when there were none.
 */
export function histogramQuantileMs(before: string, after: string, name: string, labels: string, q: number): number | undefined {
  const start = buckets(before, name, labels);
  const delta = [...buckets(after, name, labels)].map(([le, count]) => ({ le, count: count - (start.get(le) ?? 0) }));
  const total = delta.find((b) => b.le === '+Inf')?.count ?? 0;
  if (total === 0) return undefined;
  const hit = delta.find((b) => b.count >= q * total);
  return hit === undefined || hit.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(hit.le) * 1000;
}

/**
 * How many of the `times` fall within `windowMs` after one of the `starts` (both ascending or not):
 * the slow changes that began right after a periodic event (a scrape), against `windowMs / period`
 * of them expected by chance.
 */
export function countAfter(times: readonly number[], starts: readonly number[], windowMs: number): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let count = 0;
  for (const t of times) {
    const last = sorted[lastAtOrBefore(sorted, (s) => s, t)];
    if (last !== undefined && t - last < windowMs) count++;
  }
  return count;
}

/** The index of the last of `sorted` (ascending by `at`) whose time is at or before `t`; -1 when none. */
function lastAtOrBefore<T>(sorted: readonly T[], at: (item: T) => number, t: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (at(sorted[mid] as T) <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/**
 * A Prometheus histogram's observations between two /metrics texts, over all its label sets: how
 * many, their sum in ms, and how many exceeded the bucket bound `overSeconds` (which must be one);
 * only the label sets holding the text `labels` when given.
 */
export function histogramTotals(before: string, after: string, name: string, overSeconds: number, labels = ''): { count: number; sumMs: number; over: number } {
  const totals = (text: string): { count: number; sum: number; under: number } => {
    let count = 0;
    let sum = 0;
    let under = 0;
    for (const l of text.split('\n')) {
      if (!l.includes(labels)) continue;
      const value = Number(l.split(' ').pop());
      if (l.startsWith(`${name}_count`)) count += value;
      else if (l.startsWith(`${name}_sum`)) sum += value;
      else if (l.startsWith(`${name}_bucket{`) && l.match(/le="([^"]+)"/)?.[1] === String(overSeconds)) under += value;
    }
    return { count, sum, under };
  };
  const a = totals(before);
  const b = totals(after);
  return { count: b.count - a.count, sumMs: (b.sum - a.sum) * 1000, over: b.count - b.under - (a.count - a.under) };
}

/**
 * How many of the `times` (epoch ms) had a pause running within `withinMs` after them: the slow
 * changes a process's stall (its GC pauses, which never overlap one another) can account for.
 */
export function countOverlapping(times: readonly number[], pauses: readonly { at: number; ms: number }[], withinMs: number): number {
  const sorted = [...pauses].sort((a, b) => a.at - b.at);
  let count = 0;
  for (const t of times) {
    // The last pause begun by t + withinMs; being sequential, it is the one that ends last.
    const pause = sorted[lastAtOrBefore(sorted, (p) => p.at, t + withinMs)];
    if (pause !== undefined && pause.at + pause.ms >= t) count++;
  }
  return count;
}
