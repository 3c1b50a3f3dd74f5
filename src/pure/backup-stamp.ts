/**
 * The UTC time stamp in backup names, `yyyymmddThhmmssZ` (second precision): the runner writes it into
 * file and object names, and its retention, its restore and the controller's Restore read it back.
 * One definition, so the three agree on which stamps are times.
 */

/** A stamp as a regular-expression source, one capture group: `20261130T020007Z`. */
export const STAMP_SOURCE = '(\\d{8}T\\d{6}Z)';

const STAMP = new RegExp(`^${STAMP_SOURCE}$`);

/** `2026-11-30T02:00:07.123Z` → `20261130T020007Z` (UTC, second precision). */
export function formatStamp(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
}

/**
 * Epoch milliseconds of `stamp`, or undefined unless it is a real UTC time: Date.UTC would roll
 * `20260230` over into March, and read year `0050` as 1950.
 */
export function stampTime(stamp: string): number | undefined {
  if (!STAMP.test(stamp)) return undefined;
  const part = (from: number, to: number): number => Number(stamp.slice(from, to));
  const time = Date.UTC(part(0, 4), part(4, 6) - 1, part(6, 8), part(9, 11), part(11, 13), part(13, 15));
  return formatStamp(time) === stamp ? time : undefined;
}
