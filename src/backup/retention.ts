/**
 * The retention planner: which of a schedule's backups to delete after a new one is durable. Pure, over
 * a list of candidates with their times and verified state, so a directory listing (the runner) and a
 * bucket listing feed it alike; the caller deletes what it returns (each backup with its sidecar). The
 * one place that decides retention.
 *
 * Grandfather-father-son rules as `restic forget` applies them (restic internal/restic/snapshot_policy.go
 * `ApplyPolicy`, which k8up runs): backups newest first; each rule has a count and a bucket function
 * (last: every backup its own bucket; daily: the UTC calendar day; weekly: the ISO 8601 week; monthly: the
 * UTC month). Only verified backups dated no later than now (plus a small clock skew) are counted; the
 * others are reported and never deleted. Incomplete archives (`.incomplete.tar.gz`) are never counted;
 * {@link planIncompleteCleanup} keeps only a schedule's newest one. Walking the list, a backup whose
 * bucket differs from the last bucket that rule kept is kept by the rule, and uses up one of its count. The oldest backup is also kept by any rule with count left,
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

/**
 * One backup the planner may count or delete: a file of a directory or an object of a bucket, of one
 * schedule, complete (incomplete archives are never candidates). The caller decides what "verified"
 * means for its medium (src/backup/retention-candidates.ts for a directory) and says why not in
 * `problem`; the planner never counts nor deletes a candidate with a problem.
 */
export interface RetentionCandidate {
  /** The backup's name (a file name, an object key): what {@link RetentionPlan} lists. */
  readonly name: string;
  /** When the backup was taken, epoch milliseconds (the UTC stamp of its name). */
  readonly time: number;
  /** Why it cannot be trusted (no sidecar, truncated, …); absent when it was verified. */
  readonly problem?: string;
  /** Names deleted with it, after it (its `.sha256` sidecar). @default none */
  readonly companions?: readonly string[];
}

/** Input of {@link planRetention}. */
export interface RetentionInput {
  /** The schedule's complete backups other than the one just written (that one is ignored if listed). */
  readonly candidates: readonly RetentionCandidate[];
  /** The rules; each count ≥ 1 when set, and at least one set. */
  readonly policy: RetentionPolicy;
  /** The backup just written (verified by the run itself): always kept, counted as the newest whatever its time. */
  readonly justWritten: { readonly name: string; readonly time: number };
  /** The current time, epoch milliseconds: a candidate dated later than now + {@link RetentionInput.maxFutureSkewMs} is not counted. */
  readonly now: number;
  /** How far ahead of `now` a backup's time may be (clocks of two nodes differ a little). @default {@link DEFAULT_MAX_FUTURE_SKEW_MS} */
  readonly maxFutureSkewMs?: number;
}

/** A candidate the planner neither counted nor deleted, and why. */
export interface IgnoredBackup {
  readonly name: string;
  readonly reason: string;
}

/** What to delete and what stays. */
export interface RetentionPlan {
  /** Backups to delete, oldest first, each followed by its companions. */
  readonly delete: readonly string[];
  /** The backups kept and counted, newest first (the one just written first). */
  readonly keep: readonly string[];
  /** Unverified or future-dated candidates: not counted, not deleted (the caller reports them), by name. */
  readonly ignored: readonly IgnoredBackup[];
}

/**
 * The default of {@link RetentionInput.maxFutureSkewMs}: 5 minutes, Kerberos' default skew. Nodes kept
 * by NTP differ by milliseconds; a backup dated minutes ahead was named by a clock that was wrong.
 */
export const DEFAULT_MAX_FUTURE_SKEW_MS = 5 * 60_000;

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
 * Applies the policy to the verified, not future-dated candidates plus the backup just written (counted
 * as the newest, never deleted) and returns what to delete, oldest first, each followed by its
 * companions. A candidate with a problem, or dated after now + the skew, is in `ignored`: counting it
 * would let one garbage or future-dated file hold a `keepLast` slot (or a day, a week, a month) forever
 * while real backups are pruned early; deleting it could lose a real backup named by a wrong clock.
 *
 * @throws RangeError when the policy has a problem ({@link retentionPolicyProblems}), or `now` or
 * `maxFutureSkewMs` is not a finite number (the skew ≥ 0).
 */
export function planRetention(input: RetentionInput): RetentionPlan {
  const problems = retentionPolicyProblems(input.policy);
  const skew = input.maxFutureSkewMs ?? DEFAULT_MAX_FUTURE_SKEW_MS;
  if (!Number.isFinite(input.now)) problems.push(`now: must be a finite epoch time in milliseconds, got ${input.now}`);
  if (!(Number.isFinite(skew) && skew >= 0)) problems.push(`maxFutureSkewMs: must be a finite number >= 0, got ${skew}`);
  if (problems.length > 0) throw new RangeError(problems.join('; '));
  const latest = input.now + skew;
  const ignored: IgnoredBackup[] = [];
  const counted: RetentionCandidate[] = [];
  for (const candidate of input.candidates) {
    if (candidate.name === input.justWritten.name) continue;
    if (candidate.problem !== undefined) ignored.push({ name: candidate.name, reason: `not verified: ${candidate.problem}` });
    else if (!(candidate.time <= latest)) {
      ignored.push({ name: candidate.name, reason: `dated ${new Date(candidate.time).toISOString()}, later than now (${new Date(input.now).toISOString()}) plus ${Math.round((latest - input.now) / 1000)} s of clock skew: named by a clock that was ahead` });
    } else counted.push(candidate);
  }
  // Newest first; equal times (a retried run in the same second) by name for a stable order.
  counted.sort((a, b) => b.time - a.time || (a.name < b.name ? 1 : -1));
  const list: RetentionCandidate[] = [input.justWritten, ...counted];
  const rules = RULES.map(([name, bucket]) => ({ left: input.policy[name] ?? 0, bucket, last: Number.NaN }));
  const keep: string[] = [];
  const doomed: RetentionCandidate[] = [];
  list.forEach((candidate, index) => {
    let kept = false;
    for (const rule of rules) {
      if (rule.left <= 0) continue;
      const value = rule.bucket(candidate.time, index);
      if (value !== rule.last || index === list.length - 1) {
        kept = true;
        rule.last = value;
        rule.left -= 1;
      }
    }
    // Every rule keeps the first (it has count left and no bucket yet): the backup just written stays.
    if (kept) keep.push(candidate.name);
    else doomed.push(candidate);
  });
  const toDelete = doomed.reverse().flatMap((c) => [c.name, ...(c.companions ?? [])]);
  ignored.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { delete: toDelete, keep, ignored };
}

/**
 * A directory's complete backups of `schedule` as candidates, unverified (the caller checks each and
 * sets `problem`), each with its `.sha256` sidecar as companion when the listing has one. Pure.
 */
export function directoryCandidates(files: readonly string[], schedule: string): (RetentionCandidate & { readonly kind: BackupName['kind'] })[] {
  const present = new Set(files);
  return files
    .map(parseBackupName)
    // Incomplete archives are not backups: counting them would let torn archives push out complete ones.
    .filter((name): name is BackupName => name !== undefined && !name.incomplete && name.schedule === schedule)
    .map((name) => {
      const sidecar = present.has(name.file + SIDECAR_SUFFIX);
      return { name: name.file, time: name.time, kind: name.kind, ...(sidecar ? { companions: [name.file + SIDECAR_SUFFIX] } : {}) };
    });
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
