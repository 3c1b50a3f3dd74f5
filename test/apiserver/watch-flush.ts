/**
 * How a watch stream's events leave the server: gathered during an event-loop turn and written once
 * at its end. kube-apiserver's watch handler (`serveWatch`, apiserver/pkg/endpoints/handlers/watch.go)
 * encodes each event into the response and flushes only when no further event is waiting
 * (`if len(ch) == 0 { flusher.Flush() }`), so a burst of writes reaches a watcher in a few large
 * writes. Writing each event straight to the socket instead cost this single-threaded server one
 * syscall and one chunk per event per watcher, and each watcher one read and one stream callback.
 */

/** The part of a response (`http.ServerResponse`) a watch stream writes through. */
export interface TextStream {
  readonly writableEnded: boolean;
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
 * A writer for `stream` that gathers the text written during a turn and writes it as one chunk when the
 * turn is over (`defer`, `setImmediate` by default: after every I/O callback of this loop iteration),
 * in order. One write per turn rather than one per event (even corked): each write of a chunked TLS
 * response is framed, encoded and encrypted on its own.
 */
export function flushPerTurn(stream: TextStream, defer: (flush: () => void) => void = setImmediate): TurnWriter {
  let pending: string[] | undefined;
  const flush = (): void => {
    if (!pending) return;
    const text = pending.join('');
    pending = undefined;
    if (!stream.writableEnded) stream.write(text);
  };
  return {
    write(text) {
      if (stream.writableEnded) return;
      if (!pending) {
        pending = [];
        defer(flush);
      }
      pending.push(text);
    },
    flush,
  };
}
