import { statusErrors } from '../../../src/kube/api-status-error.ts';
import type { StatusBody } from '../../../src/kube/object.ts';
import type { AuthorizationAttributes } from '../rbac/index.ts';
import { type FaultRule, validateFaultRule } from './fault-rule.ts';

/** Options of {@link FaultInjector}. */
export interface FaultInjectorOptions {
  /** Source of uniform numbers in [0, 1) for `fraction` rules; pass {@link seededRandom} for determinism. @default Math.random */
  readonly random?: () => number;
}

/** What to do with a request that matched a rule. */
export interface FaultDecision {
  /** Delay before answering. */
  latencyMs: number;
  /** The error to answer with instead of serving the request; absent for latency-only rules. */
  status?: StatusBody;
}

interface ActiveRule {
  readonly id: string;
  readonly rule: FaultRule;
  remaining: number;
}

/**
 * Injects failures and latency into requests of the test API server. Rules are checked in the order
 * added; the first rule that matches (and, for `fraction` rules, draws a failure) decides. A `count`
 * rule expires after failing that many requests.
 */
export class FaultInjector {
  readonly #random: () => number;
  readonly #rules: ActiveRule[] = [];
  #nextId = 1;

  constructor(options?: FaultInjectorOptions) {
    this.#random = options?.random ?? Math.random;
  }

  /** Adds a rule (throws naming the bad field); returns its id. */
  add(rule: FaultRule): string {
    validateFaultRule(rule);
    const id = `fault-${this.#nextId++}`;
    this.#rules.push({ id, rule: { ...rule }, remaining: rule.count ?? Number.POSITIVE_INFINITY });
    return id;
  }

  /** Removes a rule; unknown ids are ignored. */
  remove(id: string): void {
    const i = this.#rules.findIndex((r) => r.id === id);
    if (i >= 0) this.#rules.splice(i, 1);
  }

  /** Removes every rule. */
  clear(): void {
    this.#rules.length = 0;
  }

  /** The active rules with their ids (`count` shows what is left). */
  list(): Array<FaultRule & { id: string }> {
    return this.#rules.map(({ id, rule, remaining }) => ({ ...rule, ...(rule.count !== undefined ? { count: remaining } : {}), id }));
  }

  /** The fault for a request, or undefined to serve it normally. */
  match(attrs: AuthorizationAttributes): FaultDecision | undefined {
    for (const active of this.#rules) {
      const { rule } = active;
      if (!matches(rule, attrs)) continue;
      if (rule.fraction !== undefined && !(this.#random() < rule.fraction)) continue;
      active.remaining -= 1;
      if (active.remaining <= 0) this.remove(active.id);
      const decision: FaultDecision = { latencyMs: rule.latencyMs ?? 0 };
      if (rule.code !== undefined) decision.status = statusFor(rule, attrs);
      return decision;
    }
    return undefined;
  }
}

function matches(rule: FaultRule, attrs: AuthorizationAttributes): boolean {
  return (
    (rule.verb === undefined || rule.verb === attrs.verb) &&
    (rule.resource === undefined || rule.resource === attrs.resource) &&
    (rule.subresource === undefined || rule.subresource === (attrs.subresource ?? '')) &&
    (rule.namespace === undefined || rule.namespace === (attrs.namespace ?? '')) &&
    (rule.name === undefined || rule.name === (attrs.name ?? '')) &&
    (rule.user === undefined || rule.user === attrs.user.name)
  );
}

function statusFor(rule: FaultRule, attrs: AuthorizationAttributes): StatusBody {
  const gr = { group: attrs.apiGroup, resource: attrs.resource };
  switch (rule.code) {
    case 409:
      return statusErrors.conflict(gr, attrs.name ?? '', rule.message);
    case 429:
      return statusErrors.tooManyRequests(rule.retryAfterSeconds ?? 1, rule.message);
    case 500:
      return statusErrors.internalError(rule.message ?? 'injected fault');
    case 503: {
      const status = statusErrors.serviceUnavailable(rule.message);
      if (rule.retryAfterSeconds !== undefined) status.details = { ...status.details, retryAfterSeconds: rule.retryAfterSeconds };
      return status;
    }
    default:
      return statusErrors.timeout(rule.message);
  }
}

/** A deterministic PRNG (mulberry32) for reproducible `fraction` rules. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
