/**
 * Reading a request body within bounds: its size, the memory it takes (asked for as the bytes arrive,
 * never for what a client only declares) and, optionally, how fast it must arrive. A client that
 * declares 32 MiB and sends a byte every 2 s holds the few bytes it sent, and only until it falls
 * behind the minimum rate (issue 41: before, it held twice its declared length for 30 s).
 */
import type { IncomingMessage } from 'node:http';
import { realClock, type Clock } from './clock.ts';

/** A request body over the limit: answer 413. */
export class RequestBodyTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`request body exceeds ${limitBytes} bytes`);
    this.name = 'RequestBodyTooLargeError';
  }
}

/** A request body the caller's memory could not take: answer 429. */
export class RequestBodyRefusedError extends Error {
  constructor(readonly bytes: number) {
    super(`no room for ${bytes} more bytes of the request body now`);
    this.name = 'RequestBodyRefusedError';
  }
}

/** A request body arriving slower than its {@link UploadPace}: answer 408 and close. */
export class RequestBodyTooSlowError extends Error {
  constructor(
    readonly receivedBytes: number,
    readonly pace: UploadPace,
  ) {
    super(`request body too slow: ${receivedBytes} bytes arrived, at least ${pace.minBytesPerSecond} bytes a second are expected after the first ${pace.graceMs} ms`);
    this.name = 'RequestBodyTooSlowError';
  }
}

/**
 * How fast a body must arrive, as Apache's mod_reqtimeout `MinRate`: the body must be complete
 * `graceMs` after its request started, plus one second for every `minBytesPerSecond` bytes received so
 * far. A client keeping the rate extends its deadline; one that stops, or trickles, is cut.
 */
export interface UploadPace {
  readonly graceMs: number;
  readonly minBytesPerSecond: number;
  /** @default realClock */
  readonly clock?: Clock;
}

/** Where {@link readRequestBody} gets the memory a body takes. */
export interface BodyMemory {
  /** Asked before each chunk of `bytes` is kept; false refuses. @default always true */
  accept?(bytes: number): boolean;
  /** A buffer of `bytes`; undefined refuses. */
  allocate(bytes: number): Buffer | undefined;
  /** Gives back a buffer `allocate` returned that the read no longer uses. */
  free(buffer: Buffer): void;
}

const UNBOUNDED_MEMORY: BodyMemory = { allocate: (bytes) => Buffer.allocUnsafe(bytes), free: () => {} };

/** The first buffer of a body: the whole of a small declared one, or 16 KiB (a TLS record) to grow from. */
const FIRST_BUFFER_BYTES = 16 * 1024;

/**
 * Calls `late` when a body of which `received()` bytes arrived by then is behind `pace`; `stop()` ends
 * the watch. Checked when the deadline comes, not on every chunk, so a fast body costs one timer.
 */
function watchPace(pace: UploadPace, received: () => number, late: () => void): { stop(): void } {
  const clock = pace.clock ?? realClock;
  const started = clock.now();
  const deadline = (): number => started + pace.graceMs + (received() / pace.minBytesPerSecond) * 1000;
  let timer = clock.setTimeout(function check() {
    const wait = deadline() - clock.now();
    if (wait <= 0) return late();
    timer = clock.setTimeout(check, wait);
  }, pace.graceMs);
  return { stop: () => clock.clearTimeout(timer) };
}

/**
 * Reads a request body of at most `limitBytes`: refused at once when Content-Length says more, and
 * stopped as soon as the stream passes the limit (a chunked body announces no length). The body is
 * copied as it arrives into a buffer from `memory` that grows (doubling, the old one freed, never past
 * the declared length) only when a chunk does not fit: what the read holds follows what arrived, at
 * most twice it plus 16 KiB. When `memory` refuses, the read stops with a {@link RequestBodyRefusedError};
 * a body behind `pace` stops it with a {@link RequestBodyTooSlowError}; either way the rest is unread
 * and the buffer freed.
 */
export function readRequestBody(req: IncomingMessage, limitBytes: number, memory: BodyMemory = UNBOUNDED_MEMORY, pace?: UploadPace): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const header = req.headers['content-length'];
    const declared = header === undefined ? undefined : Number(header);
    if (declared !== undefined && declared > limitBytes) {
      req.resume();
      return reject(new RequestBodyTooLargeError(limitBytes));
    }
    const most = declared ?? limitBytes;
    let buffer: Buffer | undefined;
    let size = 0;
    const watch = pace ? watchPace(pace, () => size, () => fail(new RequestBodyTooSlowError(size, pace))) : undefined;
    const finish = (): void => {
      watch?.stop();
      req.removeListener('data', onData).removeListener('end', onEnd).removeListener('error', fail).removeListener('close', onClose);
    };
    function fail(err: Error): void {
      finish();
      // Left unread (a refusal's caller may drain it, within its own pace).
      req.pause();
      if (buffer) memory.free(buffer);
      buffer = undefined;
      reject(err);
    }
    /** The connection went away mid-body: no answer can reach the client. */
    function onClose(): void {
      if (!req.complete) fail(new Error(`the connection closed after ${size} bytes of the request body`));
    }
    /** Room for `more` bytes after `size`: the buffer grown when it has too little; false when refused. */
    const room = (more: number): boolean => {
      const needed = size + more;
      if (buffer && needed <= buffer.length) return true;
      let grown = Math.min(most, Math.max(buffer ? buffer.length * 2 : Math.min(most, FIRST_BUFFER_BYTES), needed));
      if (declared !== undefined && declared <= FIRST_BUFFER_BYTES) grown = declared;
      const next = memory.allocate(grown);
      if (!next) return false;
      if (buffer) {
        buffer.copy(next, 0, 0, size);
        memory.free(buffer);
      }
      buffer = next;
      return true;
    };
    function onData(chunk: Buffer): void {
      if (size + chunk.length > limitBytes) return fail(new RequestBodyTooLargeError(limitBytes));
      if (memory.accept?.(chunk.length) === false || !room(chunk.length)) return fail(new RequestBodyRefusedError(chunk.length));
      size += chunk.copy(buffer!, size);
    }
    function onEnd(): void {
      finish();
      resolve(buffer ? buffer.subarray(0, size) : Buffer.alloc(0));
    }
    req.on('data', onData).on('end', onEnd).on('error', fail).on('close', onClose);
  });
}

/**
 * Reads what is left of a body and drops it (a refused request's, so the client sees the answer rather
 * than a broken pipe), within `pace` counted from now; resolves false when the client is too slow for it
 * (the connection is then best cut) or the connection closed.
 */
export function drainRequestBody(req: IncomingMessage, pace?: UploadPace): Promise<boolean> {
  if (req.complete) return Promise.resolve(true);
  return new Promise((resolve) => {
    let received = 0;
    const onData = (chunk: Buffer): void => void (received += chunk.length);
    const done = (drained: boolean): void => {
      watch?.stop();
      req.removeListener('data', onData).removeListener('end', onEnd).removeListener('close', onClose);
      resolve(drained);
    };
    const onEnd = (): void => done(true);
    const onClose = (): void => done(req.complete);
    const watch = pace ? watchPace(pace, () => received, () => done(false)) : undefined;
    req.on('data', onData).on('end', onEnd).on('close', onClose);
    req.resume();
  });
}
