/**
 * How a watch stream's events leave the server: written as they come, flushed once per event-loop
 * turn. kube-apiserver's watch handler (`serveWatch`, apiserver/pkg/endpoints/handlers/watch.go)
 * encodes each event into the response and flushes only when no further event is waiting
 * (`if len(ch) == 0 { flusher.Flush() }`), so a burst of writes reaches a watcher in a few large
 * writes. Writing each event straight to the socket instead cost this single-threaded server one
 * syscall and one chunk per event per watcher, and each watcher one read and one stream callback.
 */

/** The part of a response (`http.ServerResponse`) a watch stream writes through. */
export interface CorkableStream {
  readonly writableEnded: boolean;
  cork(): void;
  uncork(): void;
  write(chunk: string): unknown;
}

/** What {@link flushPerTurn} returns. */
export interface TurnWriter {
  /** Writes `text` (nothing once the stream has ended); it leaves with the turn's other writes. */
  write(text: string): void;
  /** Sends what this turn wrote now: before the stream is ended, so its last events are not lost. */
  flush(): void;
}

/**
 * A writer for `stream` that corks it at the first write of a turn and uncorks it when the turn is
 * over (`defer`, `setImmediate` by default: after every I/O callback of this loop iteration), so the
 * events published meanwhile go out together, in order.
 */
export function flushPerTurn(stream: CorkableStream, defer: (flush: () => void) => void = setImmediate): TurnWriter {
  let corked = false;
  const flush = (): void => {
    if (!corked) return;
    corked = false;
    stream.uncork();
  };
  return {
    write(text) {
      if (stream.writableEnded) return;
      if (!corked) {
        corked = true;
        stream.cork();
        defer(flush);
      }
      stream.write(text);
    },
    flush,
  };
}
