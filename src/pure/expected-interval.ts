/**
 * The expected time between two backups of a cron schedule, for the alert "no success in 2 expected
 * intervals" (docs/runbooks.md): the longest gap between consecutive due times over the next
 * {@link SAMPLED_RUNS} runs, so a weekday schedule's interval is the weekend's 3 days, not 1, and a
 * monthly one on the 31st gets its two-month gap. Bounded work: at most SAMPLED_RUNS + 1 due times.
 * Due times come from cron-parser (5-field standard cron, the descriptors, the schedule's time zone);
 * robfig's `@every <duration>`, which it does not read, is its duration.
 */
import { CronExpressionParser } from 'cron-parser';

/** Due times sampled for the longest gap: a year of a monthly schedule, a fortnight of a daily one. */
export const SAMPLED_RUNS = 16;

const UNITS_MS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** A Go duration (`1h30m`, `90s`) in ms, or undefined when it is not one. */
function goDurationMs(text: string): number | undefined {
  const parts = /^(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h)/u;
  let rest = text;
  let total = 0;
  if (rest === '') return undefined;
  while (rest !== '') {
    const match = parts.exec(rest);
    if (!match) return undefined;
    const unit = /(ns|us|µs|μs|ms|s|m|h)$/u.exec(match[0])![1]!;
    total += Number(match[0].slice(0, -unit.length)) * UNITS_MS[unit]!;
    rest = rest.slice(match[0].length);
  }
  return total;
}

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
