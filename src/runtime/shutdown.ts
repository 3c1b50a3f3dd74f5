/**
 * Graceful shutdown on SIGTERM/SIGINT: run the registered steps in order (stop intake and drain the
 * controller, release the lease, close watches, close servers) within one deadline, then exit 0 —
 * or 1 when the deadline passed or a step failed. Kubernetes sends SIGTERM and kills the pod after
 * `terminationGracePeriodSeconds` (30 s by default), so the default deadline leaves no margin:
 * configure it below the pod's grace period.
 */
import { realClock, type Clock } from './clock.ts';
import { silentLogger, type Logger } from './logger.ts';

/** One cleanup step; `signal` aborts when the step must give up. */
export type ShutdownStep = (signal: AbortSignal) => void | Promise<void>;

/** The process surface shutdown needs (injectable for tests). */
export interface ProcessLike {
  once(event: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
  removeListener(event: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
  exit(code: number): void;
}

/** Options for {@link GracefulShutdown}. */
export interface GracefulShutdownOptions {
  /** Time for all steps together. @default 30_000 */
  readonly deadlineMs?: number;
  /** Time each step still gets once the deadline has passed (releasing the lease matters even then). @default 2_000 */
  readonly lateStepMs?: number;
  /** Signals that start shutdown. @default ['SIGTERM', 'SIGINT'] */
  readonly signals?: readonly ('SIGTERM' | 'SIGINT')[];
  /** @default process */
  readonly process?: ProcessLike;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default silentLogger */
  readonly logger?: Logger;
}

/** Ordered cleanups run once, on a signal or on request. */
export class GracefulShutdown {
  readonly #steps: { readonly name: string; readonly run: ShutdownStep }[] = [];
  readonly #deadlineMs: number;
  readonly #lateStepMs: number;
  readonly #signals: readonly ('SIGTERM' | 'SIGINT')[];
  readonly #process: ProcessLike;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #started = new AbortController();
  readonly #listeners = new Map<'SIGTERM' | 'SIGINT', () => void>();
  #running: Promise<number> | undefined;

  constructor(options: GracefulShutdownOptions = {}) {
    this.#deadlineMs = options.deadlineMs ?? 30_000;
    this.#lateStepMs = options.lateStepMs ?? 2_000;
    if (!(this.#deadlineMs > 0)) throw new RangeError(`deadlineMs must be > 0, got ${this.#deadlineMs}`);
    this.#signals = options.signals ?? ['SIGTERM', 'SIGINT'];
    this.#process = options.process ?? process;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? silentLogger;
  }

  /** Aborts when shutdown begins (for loops that should stop taking work). */
  get signal(): AbortSignal {
    return this.#started.signal;
  }

  /** Adds a step; steps run in registration order. */
  register(name: string, step: ShutdownStep): this {
    this.#steps.push({ name, run: step });
    return this;
  }

  /** Listens for the signals. A second signal while shutting down exits at once with code 1. */
  install(): this {
    for (const sig of this.#signals) {
      const listener = (): void => {
        void this.shutdown(sig);
        // Stay subscribed for the second signal: the impatient operator's Ctrl-C.
        const again = (): void => {
          this.#logger.warn({ signal: sig }, 'second signal: exiting now');
          this.#process.exit(1);
        };
        this.#listeners.set(sig, again);
        this.#process.once(sig, again);
      };
      this.#listeners.set(sig, listener);
      this.#process.once(sig, listener);
    }
    return this;
  }

  /** Runs every step once and exits the process with the resulting code (which it also resolves). */
  shutdown(reason: string): Promise<number> {
    this.#running ??= this.#run(reason).then((code) => {
      for (const [sig, listener] of this.#listeners) if (sig !== reason) this.#process.removeListener(sig, listener);
      this.#process.exit(code);
      return code;
    });
    return this.#running;
  }

  async #run(reason: string): Promise<number> {
    this.#logger.info({ reason, deadlineMs: this.#deadlineMs }, 'shutting down');
    this.#started.abort(new Error(`shutdown: ${reason}`));
    const deadline = this.#clock.now() + this.#deadlineMs;
    let code = 0;
    for (const step of this.#steps) {
      const budget = Math.max(deadline - this.#clock.now(), this.#lateStepMs);
      const abort = new AbortController();
      const timer = this.#clock.setTimeout(() => abort.abort(new Error(`shutdown step "${step.name}" exceeded ${budget} ms`)), budget);
      const timedOut = new Promise<'timeout'>((resolve) => abort.signal.addEventListener('abort', () => resolve('timeout'), { once: true }));
      try {
        const outcome = await Promise.race([Promise.resolve().then(() => step.run(abort.signal)).then(() => 'done' as const), timedOut]);
        if (outcome === 'timeout') {
          code = 1;
          this.#logger.error({ step: step.name, budgetMs: budget }, 'shutdown step did not finish in time');
        }
      } catch (err) {
        code = 1;
        this.#logger.error({ err, step: step.name }, 'shutdown step failed');
      } finally {
        this.#clock.clearTimeout(timer);
      }
    }
    if (this.#clock.now() > deadline) code = 1;
    this.#logger.info({ code }, 'shutdown complete');
    return code;
  }
}
