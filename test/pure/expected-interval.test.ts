import { describe, expect, it } from 'vitest';
import { expectedIntervalMs } from '../../src/pure/expected-interval.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FROM = Date.parse('2026-12-01T12:00:00Z');

describe('expectedIntervalMs', () => {
  it('is the longest gap between due times, not the usual one', () => {
    expect(expectedIntervalMs('0 2 * * *', undefined, FROM)).toBe(DAY);
    expect(expectedIntervalMs('*/15 * * * *', undefined, FROM)).toBe(15 * 60_000);
    // Weekdays: Friday to Monday.
    expect(expectedIntervalMs('0 2 * * 1-5', undefined, FROM)).toBe(3 * DAY);
    // The 31st: two months between July 31 and August 31 is one, between May 31 and July 31 two.
    expect(expectedIntervalMs('0 0 31 * *', undefined, FROM)).toBeGreaterThanOrEqual(61 * DAY);
    expect(expectedIntervalMs('@daily', undefined, FROM)).toBe(DAY);
  });

  it('reads the schedule in its time zone (a DST change makes one day 25 hours), and robfig\'s @every as its duration', () => {
    expect(expectedIntervalMs('0 2 * * *', 'Europe/Berlin', Date.parse('2026-10-20T00:00:00Z'))).toBe(25 * HOUR);
    expect(expectedIntervalMs('@every 1h30m', undefined, FROM)).toBe(1.5 * HOUR);
  });

  it('has no interval for a schedule never due or not readable', () => {
    expect(expectedIntervalMs('0 0 30 2 *', undefined, FROM)).toBeUndefined();
    expect(expectedIntervalMs('@every 0s', undefined, FROM)).toBeUndefined();
    expect(expectedIntervalMs('not a schedule', undefined, FROM)).toBeUndefined();
  });
});
