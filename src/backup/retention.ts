/**
 * The retention planner: which of a schedule's backups to delete after a new one is durable. Pure; the
 * runner deletes what it returns (each file with its sidecar). The one place that decides retention.
 *
 * Grandfather-father-son rules as `restic forget` applies them (restic internal/restic/snapshot_policy.go
 * `ApplyPolicy`, which k8up runs): backups newest first; each rule has a count and a bucket function
 * (last: every backup its own bucket; daily: the UTC calendar day; weekly: the ISO 8601 week; monthly: the
 * UTC month). Incomplete archives (`.incomplete.tar.gz`) are never counted; {@link planIncompleteCleanup}
 * keeps only a schedule's newest one. Walking the list, a backup whose bucket differs from the last bucket that rule kept is kept
 * by the rule, and uses up one of its count. The oldest backup is also kept by any rule with count left,
 * so the history is as long as the counts allow. A backup kept by any rule is kept. Times are UTC: the
 * file names carry UTC stamps, and the runner's pod has no reliable local zone.
 */
import { parseBackupName, SIDECAR_SUFFIX, type BackupName } from './backup-names.ts';

/** How many backups each rule keeps; unset or 0 means the rule is off. At least one must be set. */
export interface RetentionPolicy {
  /** Keep the N newest backups. */
  readonly keepLast?: number;
  /** Keep the newest backup of each of the N newest UTC days that have backups. */
  readonly keepDaily?: number;
  /** Keep the newest backup of each of the N newest ISO weeks (UTC) that have backups. */
  readonly keepWeekly?: number;
  /** Keep the newest backup of each of the N newest UTC months that have backups. */
  readonly keepMonthly?: number;
}

/** Input of {@link planRetention}. */
export interface RetentionInput {
  /** Every file name in the destination directory (any schedule, any kind). */
  readonly files: readonly string[];
  /** The schedule whose backups are pruned; other schedules' files are never touched. */
  readonly schedule: string;
  /** The rules; each count ≥ 1 when set, and at least one set. */
  readonly policy: RetentionPolicy;
  /** The backup just written: always kept and counted as the newest, whatever its timestamp. */
  readonly justWritten: string;
}

/** What to delete: backup files oldest first, and the sidecars that go with them. */
export interface RetentionPlan {
  readonly delete: readonly string[];
  /** The backups kept, newest first (the one just written first). */
  readonly keep: readonly string[];
}

/** The rule names in restic's order, with the bucket each backup falls in. */
const RULES: readonly (readonly [keyof RetentionPolicy, (time: number, index: number) => number])[] = [
  ['keepLast', (_time, index) => index],
  ['keepDaily', (time) => {
    const d = new Date(time);
    return d.getUTCFullYear() * 10_000 + (d.getUTCMonth() + 1) * 100 + d.getUTCDate();
  }],
  ['keepWeekly', isoWeek],
  ['keepMonthly', (time) => {
    const d = new Date(time);
    return d.getUTCFullYear() * 100 + d.getUTCMonth() + 1;
  }],
];

/** Go's `time.ISOWeek` as restic's `yw` uses it: ISO year × 100 + ISO week (weeks start Monday; week 1 holds the year's first Thursday). */
export function isoWeek(time: number): number {
  const d = new Date(time);
  const day = (d.getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  const thursday = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - day + 3);
  const year = new Date(thursday).getUTCFullYear();
  const week = Math.floor((thursday - Date.UTC(year, 0, 1)) / 86_400_000 / 7) + 1;
  return year * 100 + week;
}

/**
 * The policy's problems (each naming the rule), empty when it is usable: every set count an integer
 * ≥ 1, at least one set. A 0 or a policy with no rule would delete every backup but the new one.
 */
export function retentionPolicyProblems(policy: RetentionPolicy): string[] {
  const problems: string[] = [];
  for (const [name] of RULES) {
    const count = policy[name];
    if (count !== undefined && !(Number.isInteger(count) && count >= 1)) problems.push(`${name}: must be an integer >= 1, got ${count}`);
  }
  if (RULES.every(([name]) => policy[name] === undefined)) problems.push(`at least one of ${RULES.map(([n]) => n).join(', ')} must be set`);
  return problems;
}

/**
 * Applies the policy to `schedule`'s backups (the one just written counts as the newest and is never
 * deleted) and returns the rest, oldest first, each followed by its sidecar when there is one.
 *
 * @throws RangeError when the policy has a problem ({@link retentionPolicyProblems}).
 */
export function planRetention(input: RetentionInput): RetentionPlan {
  const problems = retentionPolicyProblems(input.policy);
  if (problems.length > 0) throw new RangeError(problems.join('; '));
  const present = new Set(input.files);
  const others = input.files
    .map(parseBackupName)
    // Incomplete archives are not backups: counting them would let torn archives push out complete ones.
    .filter((name): name is BackupName => name !== undefined && !name.incomplete && name.schedule === input.schedule && name.file !== input.justWritten)
    // Newest first; equal times (a retried run in the same second) by name for a stable order.
    .sort((a, b) => b.time - a.time || (a.file < b.file ? 1 : -1));
  const newest = { file: input.justWritten, time: parseBackupName(input.justWritten)?.time ?? others[0]?.time ?? 0 };
  const list = [newest, ...others];
  const rules = RULES.map(([name, bucket]) => ({ left: input.policy[name] ?? 0, bucket, last: Number.NaN }));
  const keep: string[] = [];
  const doomed: string[] = [];
  list.forEach(({ file, time }, index) => {
    let kept = false;
    for (const rule of rules) {
      if (rule.left <= 0) continue;
      const value = rule.bucket(time, index);
      if (value !== rule.last || index === list.length - 1) {
        kept = true;
        rule.last = value;
        rule.left -= 1;
      }
    }
    // Every rule keeps the first (it has count left and no bucket yet): the backup just written stays.
    (kept ? keep : doomed).push(file);
  });
  const toDelete: string[] = [];
  for (const file of doomed.reverse()) {
    toDelete.push(file);
    if (present.has(file + SIDECAR_SUFFIX)) toDelete.push(file + SIDECAR_SUFFIX);
  }
  return { delete: toDelete, keep };
}

/**
 * After an incomplete archive of `schedule` was written (`justWritten`): that schedule's other
 * incomplete archives, each followed by its sidecar when there is one. Only the newest incomplete one
 * is kept, so a volume that is always busy does not fill the destination.
 */
export function planIncompleteCleanup(files: readonly string[], schedule: string, justWritten: string): string[] {
  const present = new Set(files);
  return files
    .map(parseBackupName)
    .filter((name): name is BackupName => name !== undefined && name.incomplete && name.schedule === schedule && name.file !== justWritten)
    .sort((a, b) => a.time - b.time || (a.file < b.file ? -1 : 1))
    .flatMap(({ file }) => (present.has(file + SIDECAR_SUFFIX) ? [file, file + SIDECAR_SUFFIX] : [file]));
}
