/**
 * Structured logging with pino: JSON lines by default (what log pipelines parse), a human-readable
 * format for local use through pino-pretty, loaded only when asked for.
 */
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

/** The logger every runtime component takes (pino's, so child bindings stay structured). */
export type Logger = PinoLogger;

/** Levels accepted by `--log-level`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /** Minimum level. @default 'info' */
  readonly level?: LogLevel;
  /** `json`: one JSON object per line; `text`: colourless pretty lines via pino-pretty. @default 'json' */
  readonly format?: 'json' | 'text';
  /** Bindings added to every line (e.g. `{ name: 'backupschedule-operator' }`). @default none */
  readonly base?: Readonly<Record<string, string>>;
  /** Where JSON lines go. @default stdout */
  readonly destination?: DestinationStream;
}

/** Creates the process logger. Rejects unknown levels and formats with a message naming the flag. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const format = options.format ?? 'json';
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new TypeError(`log level: "${level}" is not one of ${LOG_LEVELS.join(', ')}`);
  }
  if (format !== 'json' && format !== 'text') throw new TypeError(`log format: "${String(format)}" is not one of json, text`);
  const config = {
    level,
    base: { ...options.base },
    // RFC 3339 times instead of epoch millis: readable in both formats and parsed by every pipeline.
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  if (format === 'text') {
    // A transport runs pino-pretty in a worker thread: its cost is paid only when text is asked for.
    return pino({ ...config, transport: { target: 'pino-pretty', options: { colorize: false, translateTime: 'SYS:standard' } } });
  }
  return options.destination ? pino(config, options.destination) : pino(config);
}

/** A logger that drops everything (default for components constructed without one). */
export const silentLogger: Logger = pino({ level: 'silent' });

/** Parses a `--log-level` value. */
export function parseLogLevel(value: string): LogLevel {
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new TypeError(`--log-level: "${value}" is not one of ${LOG_LEVELS.join(', ')}`);
  }
  return value as LogLevel;
}
