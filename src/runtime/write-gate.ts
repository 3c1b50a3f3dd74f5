/**
 * Fencing for writes. client-go's leader election does not fence (its package doc says so): a leader
 * whose renewals stall keeps writing until it notices. Every write this controller makes passes a
 * {@link WriteGate} first, and the leader elector closes the gate before another replica could take
 * the lease.
 */

/** Thrown by {@link WriteGate.check} when the gate is closed; the write must not be sent. */
export class WriteGateClosedError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WriteGateClosedError';
  }
}

/** Decides whether a write may go out now. */
export interface WriteGate {
  /** Whether writes may go out at this instant. */
  isOpen(): boolean;
  /**
   * Throws {@link WriteGateClosedError} when the gate is closed; `description` says which write was
   * refused (`update cronjobs ns/name`), for the error message.
   */
  check(description: string): void;
}

/** A gate that is always open: for running without leader election (a single replica, tests). */
export const openWriteGate: WriteGate = {
  isOpen: () => true,
  check: () => {},
};
