/** One fault to inject into matching requests. Unset matchers match everything. */
export interface FaultRule {
  /** Kubernetes verb to match (get, list, watch, create, update, patch, delete, ...). @default any */
  verb?: string;
  /** Plural resource to match. @default any */
  resource?: string;
  /** Subresource to match (`status`). @default any */
  subresource?: string;
  /** Namespace to match. @default any */
  namespace?: string;
  /** Object name to match. @default any */
  name?: string;
  /** User name to match. @default any */
  user?: string;
  /** HTTP code to answer with: 409, 429, 500, 503 or 504; omit for latency only. @default none */
  code?: number;
  /** Fail the next N matching requests, then the rule expires. @default unlimited */
  count?: number;
  /** Fraction (0..1) of matching requests that fail, drawn from the injector's `random`. @default 1 */
  fraction?: number;
  /** `Retry-After` seconds for 429 (and 503). @default 1 */
  retryAfterSeconds?: number;
  /** Delay before answering (or before the fault), in milliseconds. @default 0 */
  latencyMs?: number;
  /** Message of the injected Status. @default Kubernetes' default text for the code */
  message?: string;
}

/** The codes a rule may inject. */
export const supportedFaultCodes = [409, 429, 500, 503, 504] as const;

/** Throws an Error naming the field when a rule is malformed. */
export function validateFaultRule(rule: FaultRule): void {
  for (const field of ['verb', 'resource', 'subresource', 'namespace', 'name', 'user', 'message'] as const) {
    const value = rule[field];
    if (value !== undefined && typeof value !== 'string') throw new Error(`fault rule: ${field} must be a string, got ${JSON.stringify(value)}`);
  }
  if (rule.code !== undefined && !(supportedFaultCodes as readonly number[]).includes(rule.code)) {
    throw new Error(`fault rule: code must be one of ${supportedFaultCodes.join('|')}, got ${JSON.stringify(rule.code)}`);
  }
  if (rule.count !== undefined && !(Number.isInteger(rule.count) && rule.count >= 1)) {
    throw new Error(`fault rule: count must be an integer >= 1, got ${JSON.stringify(rule.count)}`);
  }
  if (rule.fraction !== undefined && !(typeof rule.fraction === 'number' && rule.fraction >= 0 && rule.fraction <= 1)) {
    throw new Error(`fault rule: fraction must be a number in [0, 1], got ${JSON.stringify(rule.fraction)}`);
  }
  if (rule.retryAfterSeconds !== undefined && !(Number.isInteger(rule.retryAfterSeconds) && rule.retryAfterSeconds >= 0)) {
    throw new Error(`fault rule: retryAfterSeconds must be an integer >= 0, got ${JSON.stringify(rule.retryAfterSeconds)}`);
  }
  if (rule.latencyMs !== undefined && !(typeof rule.latencyMs === 'number' && Number.isFinite(rule.latencyMs) && rule.latencyMs >= 0)) {
    throw new Error(`fault rule: latencyMs must be a finite number >= 0, got ${JSON.stringify(rule.latencyMs)}`);
  }
  if (rule.code === undefined && rule.latencyMs === undefined) {
    throw new Error('fault rule: needs a code or latencyMs (or both)');
  }
}
