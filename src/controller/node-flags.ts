/**
 * The V8 flags the controller process runs with, in ONE place: the Dockerfile's ENTRYPOINT passes them
 * (a test checks it against this list), and the e2e tests, the demo and the convergence benchmark start
 * the bundle with them (test/e2e/harness.ts).
 *
 * Why set them at all: without flags Node sizes the heap from the container's memory limit (V8 allows
 * the old generation a quarter of it), so under a 256 MiB limit a controller caching 10,000 schedules
 * and their CronJobs (about 41 MiB live after a full GC) would collect almost continuously; and
 * without a limit V8 lets the heap grow to five times the live data during a burst of reconciles
 * (measured: 290 MiB RSS at convergence of 10,000 new schedules, 138 MiB once settled). A young
 * generation of 8 MiB semi-spaces (V8's default is 16 on 64-bit) keeps the burst's short-lived objects
 * from being promoted, so the peak stays near the steady state (163 MiB at convergence, 127 settled),
 * and an explicit old-generation limit makes the heap independent of how the container is sized.
 *
 * The last two flags are for a fresh controller's first burst (a restart, a new cluster, a mass apply),
 * while its reconcile path still runs in V8's interpreter. Feedback vectors after 2 calls instead of 8
 * let the baseline compiler, and then the optimizers, take that path sooner. In alternating A/B runs of
 * a fresh controller converging 1,000 new schedules (8–12 a side, docs/performance.md "Convergence"),
 * its CPU between its first and last write fell 3–8 % (medians); the floor writer with the same
 * informers gained nothing, and 10,000 schedules took as much CPU as before. Flushing baseline code that
 * has not run for a while, as V8 already does with bytecode, keeps what start-up code compiled that way
 * from staying resident: without it the earlier feedback cost 2–3 MiB of RSS at 10,000.
 */
export const CONTROLLER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8', '--max-old-space-size=192', '--invocation-count-for-feedback-allocation=2', '--flush-baseline-code'];
