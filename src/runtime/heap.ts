/**
 * Returning the memory of a cache sync to the OS. A LIST of thousands of objects allocates several
 * times the size of the cache in short-lived garbage; V8 grows its heap for it and keeps the freed
 * pages resident long afterwards (measured: RSS 236 MiB vs 121 MiB for the same 20,000 cached
 * objects, see bench/runtime-bench.ts). A memory-reducing full GC right after the caches have
 * synced, and after a burst of reconciles, gives those pages back.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type GcFunction = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

let exposed: GcFunction | undefined;

/**
 * V8's `gc` function: the global one under `--expose-gc`, otherwise obtained the way Node's `v8`
 * documentation shows (enable the flag, read `gc` from a fresh context, disable it again), so the
 * process needs no command-line flag and the image, the tests and the benchmarks behave alike.
 */
function gcFunction(): GcFunction {
  const global = (globalThis as { gc?: GcFunction }).gc;
  if (typeof global === 'function') return global;
  if (exposed === undefined) {
    setFlagsFromString('--expose-gc');
    exposed = runInNewContext('gc') as GcFunction;
    setFlagsFromString('--no-expose-gc');
  }
  return exposed;
}

/**
 * Runs a memory-reducing full GC (Node's `gc({ flavor: 'last-resort' })`, V8's
 * CollectAllAvailableGarbage: compacts the old generation and releases freed pages). Blocks the event
 * loop for a few tens of milliseconds at 20,000 cached objects: call it after the caches synced or
 * once a burst of work is over, never in a hot path.
 */
export function compactHeap(): void {
  gcFunction()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}
