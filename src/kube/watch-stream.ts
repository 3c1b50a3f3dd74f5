/**
 * Decoding of a WATCH response: newline-delimited JSON `WatchEvent`s arriving in arbitrary chunks
 * (one event split over several chunks, several events in one chunk, multi-byte UTF-8 characters
 * split across chunk boundaries).
 */
import { StringDecoder } from 'node:string_decoder';
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
 */
export async function* decodeWatchStream<T extends KubeObject>(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<WatchEvent<T>> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of chunks) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let newline = pending.indexOf('\n');
    if (newline < 0) continue;
    let start = 0;
    while (newline >= 0) {
      const line = pending.slice(start, newline).trim();
      if (line) yield parseWatchLine<T>(line);
      start = newline + 1;
      newline = pending.indexOf('\n', start);
    }
    pending = pending.slice(start);
  }
  const rest = (pending + decoder.end()).trim();
  if (rest) yield parseWatchLine<T>(rest);
}
