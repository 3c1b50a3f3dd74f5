import { describe, expect, it } from 'vitest';
import { formatStamp, stampTime } from '../../src/pure/backup-stamp.ts';

describe('backup name stamps', () => {
  it('formats a time to the second in UTC, and reads it back', () => {
    const time = Date.UTC(2026, 10, 30, 2, 0, 7, 999);
    expect(formatStamp(time)).toBe('20261130T020007Z');
    expect(stampTime('20261130T020007Z')).toBe(Date.UTC(2026, 10, 30, 2, 0, 7));
    expect(stampTime('20280229T235959Z')).toBe(Date.UTC(2028, 1, 29, 23, 59, 59));
  });

  it.each([
    ['20260230T000000Z', 'February 30th (Date.UTC rolls it into March)'],
    ['20270229T000000Z', 'February 29th of a common year'],
    ['20261341T000000Z', 'month 13'],
    ['20261130T240000Z', 'hour 24'],
    ['20261130T025960Z', 'second 60'],
    ['00500101T000000Z', 'year 50 (Date.UTC reads it as 1950)'],
    ['20261130T020007', 'no Z'],
    ['2026-11-30T02:00:07Z', 'RFC 3339 instead of the stamp'],
    ['x20261130T020007Z', 'text around it'],
  ])('refuses %s: %s', (stamp) => {
    expect(stampTime(stamp)).toBeUndefined();
  });
});
