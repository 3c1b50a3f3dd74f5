/**
 * How many bytes each client (a remote address) may hold at once in one kind of work, across all its
 * connections: for the conversion webhook, request bodies still being uploaded (issue 41). An upload is
 * the part of a request its client paces; one address opening many connections and sending slowly would
 * otherwise hold as much of a shared byte budget as it liked. What a client is allowed past its
 * share is refused (the webhook answers 429); other clients are unaffected.
 */

/** One request's part of its client's share. */
export interface ClientShare {
  /** Takes `bytes` more of the client's share; false (nothing taken) when it would pass it. */
  tryTake(bytes: number): boolean;
  /** Gives `bytes` back (a buffer freed), never more than this share took. */
  giveBack(bytes: number): void;
  /** Gives back all this share holds; later calls do nothing. */
  release(): void;
}

/** Bytes held per client, each at most `perClientBytes`. */
export class ClientShares {
  readonly #held = new Map<string, number>();

  /** @param perClientBytes the most one client's requests may hold together */
  constructor(readonly perClientBytes: number) {
    if (!Number.isSafeInteger(perClientBytes) || perClientBytes <= 0) throw new RangeError(`client shares: perClientBytes must be a positive integer, got ${perClientBytes}`);
  }

  /** Bytes `client` holds now. */
  heldBy(client: string): number {
    return this.#held.get(client) ?? 0;
  }

  /** Clients holding anything now (an entry lives only while it holds bytes). */
  get clients(): number {
    return this.#held.size;
  }

  /** A new, empty share of `client`'s bytes for one request. */
  share(client: string): ClientShare {
    let mine = 0;
    let released = false;
    const move = (bytes: number): void => {
      mine += bytes;
      const total = this.heldBy(client) + bytes;
      if (total === 0) this.#held.delete(client);
      else this.#held.set(client, total);
    };
    return {
      tryTake: (bytes) => {
        if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`client shares: bytes to take must be a non-negative integer, got ${bytes}`);
        if (released || this.heldBy(client) + bytes > this.perClientBytes) return false;
        move(bytes);
        return true;
      },
      giveBack: (bytes) => move(-Math.min(Math.max(0, bytes), mine)),
      release: () => {
        if (released) return;
        released = true;
        move(-mine);
      },
    };
  }
}
