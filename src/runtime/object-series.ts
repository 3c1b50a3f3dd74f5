/**
 * Metric families with one series per watched object, whose number tenants decide. prom-client renders
 * a metric's series in one synchronous pass when scraped; at 5,000 objects (15,000 series) that took
 * 45–105 ms on a 2-core machine, a stall of the controller's event loop on every scrape that showed as
 * the soak's change → write tail (docs/soak-tail.md). Here a series is its escaped label text and its
 * value, and a scrape renders the lines in slices with the event loop free between slices
 * (RuntimeMetrics.chunks, src/runtime/metrics.ts).
 */

/** Prometheus metric types these families can be. */
export type ObjectSeriesType = 'gauge' | 'counter';

/** Label values by label name. */
export type SeriesLabels = Readonly<Record<string, string>>;

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A label value as the text format escapes it (backslash, double quote, line feed). */
function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/** A sample value in the text format (`NaN`, `+Inf`, `-Inf` spelled as Prometheus reads them). */
function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** One metric family of per-object series, exposed in the Prometheus text format (version 0.0.4). */
export class ObjectSeriesFamily {
  readonly name: string;
  readonly type: ObjectSeriesType;
  readonly labelNames: readonly string[];
  /** `# HELP` and `# TYPE` lines. */
  readonly header: string;
  /** Escaped label text (`a="x",b="y"`, also the series' identity: the escaping is one-to-one) → value. */
  readonly #series = new Map<string, number>();

  constructor(name: string, help: string, type: ObjectSeriesType, labelNames: readonly string[]) {
    if (!METRIC_NAME.test(name)) throw new TypeError(`metric name "${name}" is not a Prometheus metric name`);
    for (const label of labelNames) if (!LABEL_NAME.test(label) || label.startsWith('__')) throw new TypeError(`metric ${name}: label name "${label}" is not a Prometheus label name`);
    if (new Set(labelNames).size !== labelNames.length) throw new TypeError(`metric ${name}: label names repeat`);
    this.name = name;
    this.type = type;
    this.labelNames = labelNames;
    this.header = `# HELP ${name} ${help.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'))}\n# TYPE ${name} ${type}\n`;
  }

  /** Series held. */
  get size(): number {
    return this.#series.size;
  }

  /** Sets the series of `labels` to `value` (a gauge's). */
  set(labels: SeriesLabels, value: number): void {
    if (this.type !== 'gauge') throw new TypeError(`metric ${this.name} is a ${this.type}: set() is for gauges`);
    this.#write(labels, () => value);
  }

  /** Adds `by` (≥ 0) to the series of `labels`, creating it at 0 first: `inc(labels, 0)` makes it exist. */
  inc(labels: SeriesLabels, by = 1): void {
    if (this.type !== 'counter') throw new TypeError(`metric ${this.name} is a ${this.type}: inc() is for counters`);
    if (!(by >= 0) || !Number.isFinite(by)) throw new RangeError(`metric ${this.name}: a counter grows by a finite amount ≥ 0, not ${by}`);
    this.#write(labels, (current) => current + by);
  }

  /** Removes the series of `labels`, if any. */
  remove(labels: SeriesLabels): void {
    this.#series.delete(this.#key(labels));
  }

  /** The series' lines (each ending in a line feed), in creation order; live: a series added or removed meanwhile is seen or skipped. */
  *lines(): IterableIterator<string> {
    for (const [labels, value] of this.#series) yield `${this.name}{${labels}} ${formatValue(value)}\n`;
  }

  #write(labels: SeriesLabels, next: (current: number) => number): void {
    const key = this.#key(labels);
    this.#series.set(key, next(this.#series.get(key) ?? 0));
  }

  /** The escaped label text, in label-name order; every label and no other. */
  #key(labels: SeriesLabels): string {
    const given = Object.keys(labels);
    if (given.length !== this.labelNames.length || this.labelNames.some((label) => typeof labels[label] !== 'string')) {
      throw new TypeError(`metric ${this.name}: labels ${JSON.stringify(given)} are not exactly ${JSON.stringify(this.labelNames)}`);
    }
    return this.labelNames.map((label) => `${label}="${escapeLabelValue(labels[label] as string)}"`).join(',');
  }
}
