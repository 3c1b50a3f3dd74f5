/**
 * The retention planner: which of a schedule's backups to delete after a new one is durable. Pure; the
 * runner deletes what it returns (each file with its sidecar).
 */
import { parseBackupName, SIDECAR_SUFFIX } from './backup-names.ts';

/** Input of {@link planRetention}. */
export interface RetentionInput {
  /** Every file name in the destination directory (any schedule, any kind). */
  readonly files: readonly string[];
  /** The schedule whose backups are pruned; other schedules' files are never touched. */
  readonly schedule: string;
  /** How many of this schedule's backups to keep, the new one included (≥ 1). */
  readonly keepLast: number;
  /** The backup just written: always kept, whatever its timestamp. */
  readonly justWritten: string;
}

/** What to delete: backup files oldest first, and the sidecars that go with them. */
export interface RetentionPlan {
  readonly delete: readonly string[];
  readonly keep: readonly string[];
}

/**
 * Keeps the `keepLast` newest backups of `schedule` (the one just written counts and is never deleted)
 * and returns the rest, oldest first, each followed by its sidecar when there is one.
 *
 * @throws RangeError when keepLast is not a positive integer (a 0 would delete every backup).
 */
export function planRetention(input: RetentionInput): RetentionPlan {
  if (!Number.isInteger(input.keepLast) || input.keepLast < 1) throw new RangeError(`keepLast: must be an integer >= 1, got ${input.keepLast}`);
  const present = new Set(input.files);
  const own = input.files
    .map(parseBackupName)
    .filter((name) => name !== undefined && name.schedule === input.schedule && name.file !== input.justWritten)
    .map((name) => name!)
    // Newest first; equal times (a retried run in the same second) by name for a stable order.
    .sort((a, b) => b.time - a.time || (a.file < b.file ? 1 : -1));
  const keptOthers = own.slice(0, input.keepLast - 1);
  const doomed = own.slice(input.keepLast - 1).reverse();
  const toDelete: string[] = [];
  for (const { file } of doomed) {
    toDelete.push(file);
    if (present.has(file + SIDECAR_SUFFIX)) toDelete.push(file + SIDECAR_SUFFIX);
  }
  return { delete: toDelete, keep: [input.justWritten, ...keptOthers.map((n) => n.file)] };
}
