/**
 * The Restore schema's CEL rules re-implemented in TypeScript (as cel-rules.ts does for BackupSchedule),
 * so `validate`/`preview`, the construct and the controller reject what the API server would. The
 * rules of the nodes a Restore shares with a BackupSchedule v1 (the claim path, the object store) are
 * the BackupSchedule's own rules moved to where the node sits in a Restore: one definition of each.
 * The immutability rule compares with the stored object, so it is a transition rule of its own shape.
 */
import { isDeepStrictEqual } from 'node:util';
import { CEL_RULES_V1, type CelRule } from './cel-rules.ts';
import { RESTORE_FROM_MEMBERS, SPEC_IMMUTABLE_MESSAGE } from './restore-schema.ts';

const DESTINATION = ['spec', 'destination'] as const;

/** The BackupSchedule v1 rules at or below `spec.destination.<member>`, moved under `to`. */
function destinationRules(member: string, to: readonly string[]): CelRule[] {
  const prefix = [...DESTINATION, member];
  return CEL_RULES_V1.filter((rule) => prefix.every((name, i) => rule.path[i] === name)).map((rule) => ({ ...rule, path: [...to, ...rule.path.slice(prefix.length)] }));
}

/** Every non-transition CEL rule of the Restore schema, in schema order. */
export const RESTORE_CEL_RULES: readonly CelRule[] = [
  {
    path: ['spec', 'from'],
    rule: `[${RESTORE_FROM_MEMBERS.map((m) => `has(self.${m})`).join(', ')}].filter(x, x).size() == 1`,
    message: `exactly one of ${RESTORE_FROM_MEMBERS.join(', ')} must be set`,
    check: (self) => RESTORE_FROM_MEMBERS.filter((member) => self[member] !== undefined).length === 1,
  },
  ...destinationRules('persistentVolumeClaim', ['spec', 'from', 'persistentVolumeClaim']),
  ...destinationRules('objectStore', ['spec', 'from', 'objectStore']),
  ...destinationRules('persistentVolumeClaim', ['spec', 'target', 'persistentVolumeClaim']),
];

/** A rule that compares an update with the stored object (`oldSelf`); the API server runs it on update only. */
export interface TransitionRule {
  readonly path: readonly string[];
  readonly rule: string;
  readonly message: string;
  /** The rule in TypeScript: whether `self` may replace `oldSelf`. */
  readonly check: (self: unknown, oldSelf: unknown) => boolean;
}

/** The Restore's transition rules: its spec never changes. */
export const RESTORE_TRANSITION_RULES: readonly TransitionRule[] = [
  { path: ['spec'], rule: 'self == oldSelf', message: SPEC_IMMUTABLE_MESSAGE, check: (self, oldSelf) => isDeepStrictEqual(self, oldSelf) },
];
