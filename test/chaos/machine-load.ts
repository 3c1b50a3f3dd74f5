/**
 * What the machine did while a scenario measured latency: every second, the CPU time of the whole
 * machine (`/proc/stat`: busy, steal, iowait) and of the processes in the test (`/proc/<pid>/stat`).
 * A tail that comes with steal or with CPU taken by processes outside the test is the machine's; one
 * that comes with the test's own processes busy is theirs (docs/soak-tail.md). Linux only: elsewhere
 * it records nothing and says so.
 */
import { readFileSync } from 'node:fs';

/** Kernel clock ticks per second (`getconf CLK_TCK`; 100 on every Linux build this runs on). */
const TICKS_PER_SECOND = 100;

/** One second's CPU use, each figure in cores (2 = both of two cores busy the whole second). */
export interface LoadSample {
  /** Epoch ms at the end of the interval. */
  readonly at: number;
  readonly busy: number;
  readonly steal: number;
  readonly iowait: number;
  /** Per process, by the label given to the sampler. */
  readonly processes: Readonly<Record<string, number>>;
  /** Busy time of every process not given to the sampler. */
  readonly others: number;
}

interface Counters {
  readonly at: number;
  readonly busy: number;
  readonly steal: number;
  readonly iowait: number;
  readonly processes: Record<string, number>;
}

/** `/proc/stat`'s first line in ticks: busy (user..softirq, no idle/iowait/steal), steal, iowait. */
export function parseProcStat(text: string): { busy: number; steal: number; iowait: number } | undefined {
  const line = text.split('\n', 1)[0] ?? '';
  const f = line.trim().split(/\s+/);
  if (f[0] !== 'cpu' || f.length < 9) return undefined;
  const [user, nice, system, , iowait, irq, softirq, steal] = f.slice(1, 9).map(Number) as number[];
  return { busy: (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0), steal: steal ?? 0, iowait: iowait ?? 0 };
}

/** `/proc/<pid>/stat`'s utime + stime in ticks (fields 14 and 15; the name in parentheses may hold spaces). */
export function parsePidStat(text: string): number | undefined {
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? utime + stime : undefined;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Samples the machine and the given processes once a second until stopped. */
export class MachineLoad {
  readonly #pids: Readonly<Record<string, number>>;
  readonly #samples: LoadSample[] = [];
  #last: Counters | undefined;
  #timer: NodeJS.Timeout | undefined;

  /** `pids`: label → pid of each process in the test. */
  constructor(pids: Readonly<Record<string, number>>) {
    this.#pids = pids;
  }

  start(): void {
    this.#last = this.#read();
    this.#timer = setInterval(() => this.#sample(), 1_000);
    this.#timer.unref();
  }

  stop(): readonly LoadSample[] {
    clearInterval(this.#timer);
    this.#sample();
    return this.#samples;
  }

  /** Whether `/proc` could be read (false off Linux). */
  get available(): boolean {
    return this.#last !== undefined;
  }

  #read(): Counters | undefined {
    const machine = parseProcStat(read('/proc/stat') ?? '');
    if (!machine) return undefined;
    const processes: Record<string, number> = {};
    for (const [label, pid] of Object.entries(this.#pids)) processes[label] = parsePidStat(read(`/proc/${pid}/stat`) ?? '') ?? Number.NaN;
    return { at: Date.now(), ...machine, processes };
  }

  #sample(): void {
    const now = this.#read();
    const last = this.#last;
    this.#last = now;
    if (!now || !last) return;
    const seconds = (now.at - last.at) / 1000;
    if (seconds <= 0) return;
    const cores = (ticks: number): number => ticks / TICKS_PER_SECOND / seconds;
    const processes: Record<string, number> = {};
    let ours = 0;
    for (const label of Object.keys(this.#pids)) {
      const used = cores((now.processes[label] ?? Number.NaN) - (last.processes[label] ?? Number.NaN));
      processes[label] = used;
      if (Number.isFinite(used)) ours += used;
    }
    const busy = cores(now.busy - last.busy);
    this.#samples.push({ at: now.at, busy, steal: cores(now.steal - last.steal), iowait: cores(now.iowait - last.iowait), processes, others: Math.max(0, busy - ours) });
  }
}

/** The mean of each figure over `samples` (zeros when empty). */
export function meanLoad(samples: readonly LoadSample[]): Omit<LoadSample, 'at'> {
  const n = samples.length || 1;
  const sum = (pick: (s: LoadSample) => number): number => samples.reduce((a, s) => a + (Number.isFinite(pick(s)) ? pick(s) : 0), 0) / n;
  const labels = [...new Set(samples.flatMap((s) => Object.keys(s.processes)))];
  return {
    busy: sum((s) => s.busy),
    steal: sum((s) => s.steal),
    iowait: sum((s) => s.iowait),
    others: sum((s) => s.others),
    processes: Object.fromEntries(labels.map((l) => [l, sum((s) => s.processes[l] ?? Number.NaN)])),
  };
}

/**
 * The samples of the seconds in which at least `minimum` of `times` (epoch ms) fell: the load while
 * the tail happened, to compare with the load over the whole run.
 */
export function samplesAround(samples: readonly LoadSample[], times: readonly number[], minimum: number): LoadSample[] {
  const counts = new Map<number, number>();
  for (const t of times) {
    // The sample whose interval (previous at, at] holds t.
    const index = samples.findIndex((s) => s.at >= t);
    if (index >= 0) counts.set(index, (counts.get(index) ?? 0) + 1);
  }
  return [...counts].filter(([, n]) => n >= minimum).map(([i]) => samples[i] as LoadSample);
}

/** "busy 1.21 · steal 0.02 · iowait 0.00 · controller 0.20 · … · others 0.05" (cores). */
export function formatLoad(load: Omit<LoadSample, 'at'>): string {
  const parts = [`busy ${load.busy.toFixed(2)}`, `steal ${load.steal.toFixed(2)}`, `iowait ${load.iowait.toFixed(2)}`];
  for (const [label, used] of Object.entries(load.processes)) parts.push(`${label} ${used.toFixed(2)}`);
  parts.push(`others ${load.others.toFixed(2)}`);
  return parts.join(' · ');
}
