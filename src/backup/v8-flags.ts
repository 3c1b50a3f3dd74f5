/**
 * V8 settings of the backup runner, applied at run time: the image's ENTRYPOINT flags are the
 * controller's (src/controller/node-flags.ts) and a CronJob passes only args.
 *
 * Why: the runner's hot loop is a few functions per 32 KiB chunk (gRPC framing, protobuf decoding, a
 * writev); the bytes themselves go through native code (sockets, SHA-256, zlib, file writes). V8's
 * optimizing compilers (Maglev, TurboFan) gain little there (CPU time within noise on a 209 MB
 * snapshot), but their compilation zones raised the runner's peak RSS by 8-15 MiB (Node 24, the bundle:
 * 93-99 MiB with them, 84-86 without).
 * Sparkplug (baseline code, no optimization zones) stays on. Both flags only steer future compilation,
 * so setting them after start is safe.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Flags the runner sets on itself before it starts copying. */
export const RUNNER_V8_FLAGS: readonly string[] = ['--no-opt', '--no-maglev'];

/** Applies {@link RUNNER_V8_FLAGS}. */
export function applyRunnerV8Flags(): void {
  for (const flag of RUNNER_V8_FLAGS) setFlagsFromString(flag);
}

/**
 * A function that runs a minor GC (scavenge) every `everyBytes` reported to it.
 *
 * Why: each 32 KiB chunk of a stream lives in Buffers outside the JavaScript heap, held by small young
 * objects. V8 scavenges when the young generation fills, which these tiny wrappers take hundreds of MB
 * of stream to do, or when external memory grew 64 MiB since the last GC; until then dead chunks stay
 * resident. A scavenge every few MiB (about a millisecond each) keeps RSS flat whatever the size.
 * `--expose-gc` set at run time plus a fresh context is the documented way to reach `gc` without
 * changing the image's node flags.
 */
export function scavengeEvery(everyBytes: number): (bytes: number) => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major'; execution?: 'sync' }) => void;
  let since = 0;
  return (bytes) => {
    since += bytes;
    if (since < everyBytes) return;
    since = 0;
    gc({ type: 'minor' });
  };
}
