/**
 * Cooperative yielding for work that chains through promises. A reconcile that needs no I/O (a
 * schedule already in sync) resolves in microtasks, and a worker taking the next queued key goes on in
 * microtasks too: a backlog of such keys never returns to the event loop, so no socket is read, no
 * timer fires and no probe or scrape is answered until the backlog is gone. In the soak, ~830
 * schedules due at the same moment held the controller that way for 1.15 s (docs/soak-tail.md).
 * Callers ask {@link yieldIfHeld} between units of work; it lets the event loop turn once the current
 * turn has lasted longer than the budget, and costs a clock read otherwise.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long one turn of the event loop may run chained work before it yields. */
export const TURN_BUDGET_MS = 5;

let turnStarted = performance.now();
let watching = false;

/** Notes when the event loop next reaches its check phase: a new turn has begun by then. */
function watchForNextTurn(): void {
  if (watching) return;
  watching = true;
  setImmediate(() => {
    watching = false;
    turnStarted = performance.now();
  });
}

/** Yields to the event loop when the current turn has run longer than `budgetMs`. */
export async function yieldIfHeld(budgetMs = TURN_BUDGET_MS): Promise<void> {
  watchForNextTurn();
  if (performance.now() - turnStarted < budgetMs) return;
  await nextTurn();
}
