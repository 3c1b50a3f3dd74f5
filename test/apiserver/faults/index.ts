/** Fault injection for the test API server: fail or delay matching requests. */
export { type FaultRule, supportedFaultCodes, validateFaultRule } from './fault-rule.ts';
export { FaultInjector, type FaultDecision, type FaultInjectorOptions, seededRandom } from './fault-injector.ts';
