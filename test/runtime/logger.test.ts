import type { DestinationStream } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger, parseLogLevel } from '../../src/runtime/logger.ts';

describe('createLogger', () => {
  it('writes JSON lines with an ISO time, a level label and child bindings', () => {
    const lines: string[] = [];
    const destination: DestinationStream = { write: (s: string) => void lines.push(s) };
    const logger = createLogger({ level: 'debug', base: { app: 'op' }, destination });
    logger.child({ controller: 'c', reconcileID: 'r1' }).debug('hello');
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'debug', app: 'op', controller: 'c', reconcileID: 'r1', msg: 'hello' });
    expect(String(line['time'])).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('drops lines below the level', () => {
    const lines: string[] = [];
    const destination: DestinationStream = { write: (s: string) => void lines.push(s) };
    const logger = createLogger({ level: 'warn', destination });
    logger.info('quiet');
    logger.warn('loud');
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['loud']);
  });

  it('rejects an unknown level naming the flag and the choices', () => {
    expect(() => parseLogLevel('verbose')).toThrow('--log-level: "verbose" is not one of fatal, error, warn, info, debug, trace, silent');
  });
});
