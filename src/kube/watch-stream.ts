/**
 * Decoding of a WATCH response: newline-delimited JSON `WatchEvent`s arriving in arbitrary chunks
 * (one event split over several chunks, several events in one chunk, multi-byte UTF-8 characters
 * split across chunk boundaries).
 */
import type { KubeObject, WatchEvent } from './object.ts';

/** A line of a watch stream that is not a valid `WatchEvent`. */
export class WatchDecodeError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WatchDecodeError';
  }
}

const EVENT_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

/** Parses one line of a watch stream. */
export function parseWatchLine<T extends KubeObject>(line: string): WatchEvent<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (err) {
    throw new WatchDecodeError(`watch stream: line is not JSON: ${line.slice(0, 200)}`, { cause: err });
  }
  const event = parsed as { type?: unknown; object?: unknown };
  if (typeof event !== 'object' || event === null || typeof event.type !== 'string' || !EVENT_TYPES.has(event.type)) {
    throw new WatchDecodeError(`watch stream: event has no valid "type": ${line.slice(0, 200)}`);
  }
  if (typeof event.object !== 'object' || event.object === null) {
    throw new WatchDecodeError(`watch stream: ${event.type} event has no "object"`);
  }
  return parsed as WatchEvent<T>;
}

/**
 * Turns a byte stream (e.g. an `http.IncomingMessage`) into watch events. A trailing line without
 * a newline at the end of the stream is still decoded.
 *
 * Lines are cut on the byte level and each decoded once with `Buffer.toString` (newline bytes never
 * occur inside a UTF-8 multi-byte sequence), which keeps strings flat for `JSON.parse` instead of
 * concatenating chunk strings.
 */
export async function* decodeWatchStream<T extends KubeObject>(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<WatchEvent<T>> {
  let pending: Buffer | undefined;
  for await (const raw of chunks) {
    let chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
    let newline = chunk.indexOf(NEWLINE);
    if (newline < 0) {
      pending = pending ? Buffer.concat([pending, chunk]) : chunk;
      continue;
    }
    if (pending) {
      chunk = Buffer.concat([pending, chunk]);
      newline += pending.length;
      pending = undefined;
    }
    let start = 0;
    while (newline >= 0) {
      if (newline > start) {
        const line = chunk.toString('utf8', start, newline);
        if (line.trim()) yield parseWatchLine<T>(line);
      }
      start = newline + 1;
      newline = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length) pending = Buffer.from(chunk.subarray(start));
  }
  const rest = pending?.toString('utf8').trim();
  if (rest) yield parseWatchLine<T>(rest);
}

const NEWLINE = 0x0a;
