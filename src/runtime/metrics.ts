/**
 * Prometheus metrics under the names controller-runtime and client-go use, so existing dashboards
 * and alerts work unchanged: `controller_runtime_*`, `workqueue_*`, `rest_client_*` and
 * `leader_election_master_status`. Everything lives in one own {@link Registry} (never prom-client's
 * global one, so tests and several instances do not collide).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RequestObservation } from '../kube/kube-client.ts';
import { ObjectSeriesFamily, type ObjectSeriesType } from './object-series.ts';
import type { WorkQueueMetricsProvider } from './work-queue.ts';

/** Results of one reconcile, the `result` label of `controller_runtime_reconcile_total`. */
export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'requeue_after';

/** The metrics one controller records. */
export interface ControllerMetrics {
  /** Counts one finished reconcile. */
  reconciled(outcome: ReconcileOutcome, seconds: number): void;
  /** Counts a reconcile error (and, when `terminal`, a terminal one). */
  reconcileError(terminal: boolean): void;
  setMaxConcurrentReconciles(n: number): void;
  setActiveWorkers(n: number): void;
}

/** Builds {@link ControllerMetrics} for a controller name (label sets initialised at once). */
export interface ControllerMetricsFactory {
  controller(name: string): ControllerMetrics;
}

/** Metrics that record nothing. */
export const noopControllerMetrics: ControllerMetricsFactory = {
  controller: () => ({ reconciled: () => {}, reconcileError: () => {}, setMaxConcurrentReconciles: () => {}, setActiveWorkers: () => {} }),
};

/** Options for {@link RuntimeMetrics}. */
export interface RuntimeMetricsOptions {
  /** Registry to register into. @default a new Registry */
  readonly registry?: Registry;
  /** Also export Node process metrics (`process_resident_memory_bytes`, …). @default true */
  readonly processMetrics?: boolean;
}

// controller-runtime's reconcile_time_seconds buckets (pkg/internal/controller/metrics).
const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60];
// controller-runtime's workqueue buckets: prometheus.ExponentialBuckets(10e-9, 10, 12).
const WORKQUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));
// client-go's rest_client_request_duration_seconds buckets.
const REST_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

const OUTCOMES: readonly ReconcileOutcome[] = ['success', 'error', 'requeue', 'requeue_after'];

/**
 * Per-object series written between two turns of the event loop during a scrape: copying a few
 * thousand pre-rendered lines takes well under a millisecond, so reconciles wait at most that long.
 */
const SERIES_PER_SLICE = 1_000;

/** What `/metrics` serves: the exposition text, produced in chunks. */
export interface MetricsExposition {
  /** The Content-Type of the text. */
  readonly contentType: string;
  /** The text, in chunks; the event loop runs between chunks. */
  chunks(): AsyncIterable<string>;
}

/** All runtime metrics of the process. */
export class RuntimeMetrics implements ControllerMetricsFactory, MetricsExposition {
  readonly registry: Registry;
  readonly #families: ObjectSeriesFamily[] = [];
  readonly #reconcileTotal: Counter<'controller' | 'result'>;
  readonly #reconcileErrors: Counter<'controller'>;
  readonly #terminalErrors: Counter<'controller'>;
  readonly #reconcileTime: Histogram<'controller'>;
  readonly #maxConcurrent: Gauge<'controller'>;
  readonly #activeWorkers: Gauge<'controller'>;
  readonly #leader: Gauge<'name'>;
  readonly #restRequests: Counter<'code' | 'method' | 'host'>;
  readonly #restLatency: Histogram<'verb' | 'host'>;
  /** `workqueue_*` metrics for the rate-limiting queue (client-go `MetricsProvider`). */
  readonly workQueue: WorkQueueMetricsProvider;

  constructor(options: RuntimeMetricsOptions = {}) {
    this.registry = options.registry ?? new Registry();
    const registers = [this.registry];
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.#reconcileTotal = new Counter({ name: 'controller_runtime_reconcile_total', help: 'Total number of reconciliations per controller', labelNames: ['controller', 'result'], registers });
    this.#reconcileErrors = new Counter({ name: 'controller_runtime_reconcile_errors_total', help: 'Total number of reconciliation errors per controller', labelNames: ['controller'], registers });
    this.#terminalErrors = new Counter({ name: 'controller_runtime_terminal_reconcile_errors_total', help: 'Total number of terminal reconciliation errors per controller', labelNames: ['controller'], registers });
    this.#reconcileTime = new Histogram({ name: 'controller_runtime_reconcile_time_seconds', help: 'Length of time per reconciliation per controller', labelNames: ['controller'], buckets: RECONCILE_BUCKETS, registers });
    this.#maxConcurrent = new Gauge({ name: 'controller_runtime_max_concurrent_reconciles', help: 'Maximum number of concurrent reconciles per controller', labelNames: ['controller'], registers });
    this.#activeWorkers = new Gauge({ name: 'controller_runtime_active_workers', help: 'Number of currently used workers per controller', labelNames: ['controller'], registers });
    this.#leader = new Gauge({ name: 'leader_election_master_status', help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. \'name\' is the string used to identify the lease.', labelNames: ['name'], registers });
    this.#restRequests = new Counter({ name: 'rest_client_requests_total', help: 'Number of HTTP requests, partitioned by status code, method, and host.', labelNames: ['code', 'method', 'host'], registers });
    this.#restLatency = new Histogram({ name: 'rest_client_request_duration_seconds', help: 'Request latency in seconds. Broken down by verb, and host.', labelNames: ['verb', 'host'], buckets: REST_BUCKETS, registers });
    this.workQueue = workQueueMetrics(registers);
  }

  /** Metrics of the controller `name`; its label sets are created now so dashboards see zeros. */
  controller(name: string): ControllerMetrics {
    // Bound once: `labels()` hashes its values on every call, and these run on every reconcile.
    const totals = new Map(OUTCOMES.map((outcome) => [outcome, this.#reconcileTotal.labels(name, outcome)]));
    const time = this.#reconcileTime.labels(name);
    const errors = this.#reconcileErrors.labels(name);
    const terminalErrors = this.#terminalErrors.labels(name);
    const active = this.#activeWorkers.labels(name);
    for (const total of totals.values()) total.inc(0);
    errors.inc(0);
    terminalErrors.inc(0);
    this.#reconcileTime.zero({ controller: name });
    active.set(0);
    return {
      reconciled: (outcome, seconds) => {
        totals.get(outcome)?.inc();
        time.observe(seconds);
      },
      reconcileError: (terminal) => {
        errors.inc();
        if (terminal) terminalErrors.inc();
      },
      setMaxConcurrentReconciles: (n) => this.#maxConcurrent.labels(name).set(n),
      setActiveWorkers: (n) => active.set(n),
    };
  }

  /** `leader_election_master_status{name}` for one lease; the shape the leader elector's `metrics` option takes. */
  leaderElection(name: string): { setLeader(isLeader: boolean): void } {
    this.#leader.labels(name).set(0);
    return { setLeader: (isLeader) => this.#leader.labels(name).set(isLeader ? 1 : 0) };
  }

  // The label sets are few (codes × methods × hosts): bound children are looked up, not hashed anew per request.
  readonly #restRequestsBound = boundChildren((code: string, method: string, host: string) => this.#restRequests.labels(code, method, host));
  readonly #restLatencyBound = boundChildren((method: string, host: string) => this.#restLatency.labels(method, host));

  /** Observer for `KubeClientOptions.onRequest`. */
  readonly restClientObserver = (o: RequestObservation): void => {
    this.#restRequestsBound(o.code, o.method, o.host).inc();
    this.#restLatencyBound(o.method, o.host).observe(o.durationSeconds);
  };

  /**
   * A family of per-object series (one per watched object and label set), served after the registry's
   * metrics: see {@link ObjectSeriesFamily} for why these are not prom-client metrics.
   */
  objectSeries(name: string, help: string, type: ObjectSeriesType, labelNames: readonly string[]): ObjectSeriesFamily {
    if (this.registry.getSingleMetric(name) || this.#families.some((f) => f.name === name)) throw new Error(`metric ${name} is already registered`);
    const family = new ObjectSeriesFamily(name, help, type, labelNames);
    this.#families.push(family);
    return family;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The registry's text (bounded: label sets are few), then each family's series in slices of {@link SERIES_PER_SLICE}. */
  async *chunks(): AsyncIterable<string> {
    yield await this.registry.metrics();
    for (const family of this.#families) {
      if (family.size === 0) continue;
      let slice: string[] = [`\n${family.header}`];
      for (const line of family.lines()) {
        slice.push(line);
        if (slice.length < SERIES_PER_SLICE) continue;
        yield slice.join('');
        slice = [];
        await nextTurn();
      }
      if (slice.length > 0) yield slice.join('');
    }
  }

  /** The whole exposition text (what `/metrics` serves). */
  async text(): Promise<string> {
    let text = '';
    for await (const chunk of this.chunks()) text += chunk;
    return text;
  }
}

/** `bind(...values)` (a metric's `labels()`), made once per distinct label values and looked up after. */
function boundChildren<V extends string[], C>(bind: (...values: V) => C): (...values: V) => C {
  const children = new Map<string, C>();
  return (...values) => {
    const key = values.join('\u0000');
    let child = children.get(key);
    if (child === undefined) children.set(key, (child = bind(...values)));
    return child;
  };
}

function workQueueMetrics(registers: Registry[]): WorkQueueMetricsProvider {
  const labelNames = ['name'] as const;
  const depth = new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames, registers });
  const adds = new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames, registers });
  const latency = new Histogram({ name: 'workqueue_queue_duration_seconds', help: 'How long in seconds an item stays in workqueue before being requested', labelNames, buckets: WORKQUEUE_BUCKETS, registers });
  const work = new Histogram({ name: 'workqueue_work_duration_seconds', help: 'How long in seconds processing an item from workqueue takes.', labelNames, buckets: WORKQUEUE_BUCKETS, registers });
  const unfinished = new Gauge({ name: 'workqueue_unfinished_work_seconds', help: 'How many seconds of work has been done that is in progress and hasn\'t been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.', labelNames, registers });
  const longest = new Gauge({ name: 'workqueue_longest_running_processor_seconds', help: 'How many seconds has the longest running processor for workqueue been running.', labelNames, registers });
  const retries = new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames, registers });
  return {
    newDepthMetric: (name) => {
      const child = depth.labels(name);
      child.set(0);
      return { inc: () => child.inc(), dec: () => child.dec() };
    },
    newAddsMetric: (name) => {
      const child = adds.labels(name);
      child.inc(0);
      return { inc: () => child.inc() };
    },
    newLatencyMetric: (name) => {
      latency.zero({ name });
      const child = latency.labels(name);
      return { observe: (s) => child.observe(s) };
    },
    newWorkDurationMetric: (name) => {
      work.zero({ name });
      const child = work.labels(name);
      return { observe: (s) => child.observe(s) };
    },
    newUnfinishedWorkSecondsMetric: (name) => {
      const child = unfinished.labels(name);
      child.set(0);
      return { set: (v) => child.set(v) };
    },
    newLongestRunningProcessorSecondsMetric: (name) => {
      const child = longest.labels(name);
      child.set(0);
      return { set: (v) => child.set(v) };
    },
    newRetriesMetric: (name) => {
      const child = retries.labels(name);
      child.inc(0);
      return { inc: () => child.inc() };
    },
  };
}
