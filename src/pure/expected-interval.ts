/**
 * The expected time between two backups of a cron schedule, for the alert "no success in 2 expected
 * intervals" (docs/runbooks.md): the longest gap between consecutive due times over the next
 * {@link SAMPLED_RUNS} runs, so a weekday schedule's interval is the weekend's 3 days, not 1, and a
 * monthly one on the 31st gets its two-month gap. Bounded work: at most SAMPLED_RUNS + 1 due times.
 * Due times come from cron-parser (5-field standard cron, the descriptors, the schedule's time zone);
 * robfig's `@every <duration>`, which it does not read, is its duration.
 */
import { CronExpressionParser } from 'cron-parser';
import { goDurationMs } from '../api/go-duration.ts';

/** Due times sampled for the longest gap: a year of a monthly schedule, a fortnight of a daily one. */
export const SAMPLED_RUNS = 16;

/**
 * The longest gap in ms between consecutive due times of `schedule` (in `timeZone`, UTC when
 * undefined) from `fromMs` on, or undefined when the schedule is never due again (`0 0 30 2 *`) or
 * cannot be read.
 */
export function expectedIntervalMs(schedule: string, timeZone: string | undefined, fromMs: number): number | undefined {
  const trimmed = schedule.trim();
  if (trimmed.startsWith('@every ')) {
    const ms = goDurationMs(trimmed.slice('@every '.length).trim());
    return ms !== undefined && ms > 0 ? ms : undefined;
  }
  try {
    const expression = CronExpressionParser.parse(trimmed, { currentDate: new Date(fromMs), tz: timeZone ?? 'UTC' });
    let previous = expression.next().getTime();
    let longest = 0;
    for (let i = 0; i < SAMPLED_RUNS; i++) {
      let next: number;
      try {
        next = expression.next().getTime();
      } catch {
        break; // no due time within cron-parser's search range: the gaps so far are what there is
      }
      longest = Math.max(longest, next - previous);
      previous = next;
    }
    return longest > 0 ? longest : undefined;
  } catch {
    // Not a schedule cron-parser reads, or never due: no interval to expect.
    return undefined;
  }
}
