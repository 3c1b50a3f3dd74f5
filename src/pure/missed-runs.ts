/**
 * A run that was due and never started: its due time passed more than the start grace ago
 * (`startingDeadlineSeconds`, or {@link DEFAULT_START_GRACE_SECONDS} without one), and the CronJob
 * scheduled nothing at or after it (`status.lastScheduleTime`), though the schedule existed and was
 * not suspended. That is what happens when kube-controller-manager is down or late past the deadline,
 * or the CronJob is missing or not ours. Due times come from cron-parser in the schedule's time zone;
 * the work is bounded: one `prev()` and one `next()` per look.
 */
import { CronExpressionParser } from 'cron-parser';

/**
 * How late a run may start without a `startingDeadlineSeconds`: the CronJob controller then still
 * starts a late run whenever it gets to it, so a few minutes of its usual delay are not a miss.
 */
export const DEFAULT_START_GRACE_SECONDS = 300;

/**
 * The window over which the checks of schedules due at the same moment are spread. Schedules share due
 * times (`0 2 * * *` on thousands of them is usual), and one check each at due + grace + 1 s requeued
 * them all in the same millisecond: in the soak, ~830 schedules on `*\/20 * * * *` kept the controller
 * busy for 1.15 s at once, and every change arriving meanwhile waited behind them (docs/soak-tail.md).
 * Spread over a minute, 10,000 schedules cost ~170 reconciles a second for that minute; a miss is
 * reported at most a minute later.
 */
export const MISSED_CHECK_SPREAD_MS = 60_000;

/** A stable offset in [0, {@link MISSED_CHECK_SPREAD_MS}) for the schedule `id` (its uid): FNV-1a, so offsets are even whatever the ids look like. */
export function missedCheckSpreadMs(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % MISSED_CHECK_SPREAD_MS;
}

/** What decides whether a run was missed. */
export interface ScheduleTiming {
  readonly schedule: string;
  readonly timeZone?: string | undefined;
  readonly suspend?: boolean | undefined;
  readonly startingDeadlineSeconds?: number | undefined;
  /** When the schedule was created (ms): nothing was due before. */
  readonly createdMs: number;
  /** The CronJob's `status.lastScheduleTime` (ms), when it has one. */
  readonly lastScheduleMs?: number | undefined;
  /** Added to the next check ({@link missedCheckSpreadMs} of the schedule's uid). @default 0 */
  readonly checkSpreadMs?: number | undefined;
}

function graceMs(timing: ScheduleTiming): number {
  return (timing.startingDeadlineSeconds ?? DEFAULT_START_GRACE_SECONDS) * 1000;
}

/** cron-parser does not read robfig's `@every`: such a schedule is not checked. */
function expression(timing: ScheduleTiming, fromMs: number): ReturnType<typeof CronExpressionParser.parse> | undefined {
  if (timing.schedule.trim().startsWith('@every')) return undefined;
  try {
    return CronExpressionParser.parse(timing.schedule.trim(), { currentDate: new Date(fromMs), tz: timing.timeZone ?? 'UTC' });
  } catch {
    return undefined;
  }
}

/** The due time (ms) of the newest run missed at `nowMs`, or undefined when none was. */
export function missedDueMs(timing: ScheduleTiming, nowMs: number): number | undefined {
  if (timing.suspend) return undefined;
  const latestLate = nowMs - graceMs(timing);
  const cron = expression(timing, latestLate);
  if (!cron) return undefined;
  let due: number;
  try {
    due = cron.prev().getTime();
  } catch {
    return undefined;
  }
  if (due < timing.createdMs) return undefined;
  if (timing.lastScheduleMs !== undefined && timing.lastScheduleMs >= due) return undefined;
  return due;
}

/**
 * When (ms) to look again: the next due time's grace passed (and the schedule's spread), so a run
 * missed meanwhile is seen then.
 */
export function nextMissedCheckMs(timing: ScheduleTiming, nowMs: number): number | undefined {
  if (timing.suspend) return undefined;
  const spread = timing.checkSpreadMs ?? 0;
  // A look within the spread after a grace still belongs to that due time: ask from before it.
  const cron = expression(timing, nowMs - graceMs(timing) - spread);
  if (!cron) return undefined;
  try {
    return cron.next().getTime() + graceMs(timing) + 1_000 + spread;
  } catch {
    return undefined;
  }
}
