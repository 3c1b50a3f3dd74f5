import { describe, expect, it } from 'vitest';
import { checkFormat } from './formats.ts';

describe('checkFormat', () => {
  it.each<[string, string, boolean]>([
    ['date-time', '2026-11-30T00:05:38Z', true],
    ['date-time', '2026-11-30T00:05:38.123456+02:00', true],
    ['date-time', '2026-11-30', false],
    ['date', '2026-11-30', true],
    ['date', '2026-13-01', false],
    ['ipv4', '10.0.0.1', true],
    ['ipv4', '10.0.0.256', false],
    ['ipv6', '::1', true],
    ['ipv6', '10.0.0.1', false],
    ['cidr', '10.0.0.0/8', true],
    ['cidr', 'fd00::/64', true],
    ['cidr', '10.0.0.0/33', false],
    ['uuid', '8a2689b0-5a56-4c4c-9423-99197c174cb5', true],
    ['uuid', '8a2689b0', false],
    ['hostname', 'api.example.com', true],
    ['hostname', '-bad-.com', false],
    ['mac', '00:1a:2b:3c:4d:5e', true],
    ['mac', '00:1a:2b', false],
    ['byte', 'aGVsbG8=', true],
    ['byte', 'not base64!', false],
    ['uri', 'https://example.com/x', true],
    ['uri', 'no scheme', false],
    ['duration', '1h30m', true],
    ['duration', 'forever', false],
    ['int64', 'anything', true],
    ['my-own-format', 'anything', true],
  ])('%s %j → %s', (format, value, valid) => {
    expect(checkFormat(format, value)).toBe(valid);
  });
});
