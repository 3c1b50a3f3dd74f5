import { backupScheduleSchema, type SchemaNode } from './schema.ts';

function specProperty(...path: string[]): SchemaNode {
  let node: SchemaNode = backupScheduleSchema;
  for (const name of ['spec', ...path]) {
    const properties = node['properties'] as Record<string, SchemaNode> | undefined;
    const next = properties?.[name];
    if (next === undefined) throw new Error(`schema has no property spec.${path.join('.')}`);
    node = next;
  }
  return node;
}

function defaultOf<T>(...path: string[]): T {
  const value = specProperty(...path)['default'];
  if (value === undefined) throw new Error(`schema has no default for spec.${path.join('.')}`);
  return value as T;
}

/**
 * The spec defaults, read from the schema's `default` keywords (the API server applies the same ones
 * on admission), so code that handles a not-yet-defaulted spec (tests, golden inputs, the controller
 * on objects created before a default existed) behaves exactly as if the server had defaulted it.
 */
export const SPEC_DEFAULTS = {
  suspend: defaultOf<boolean>('suspend'),
  keepLast: defaultOf<number>('retention', 'keepLast'),
  concurrencyPolicy: defaultOf<'Allow' | 'Forbid' | 'Replace'>('concurrencyPolicy'),
  successfulJobsHistoryLimit: defaultOf<number>('successfulJobsHistoryLimit'),
  failedJobsHistoryLimit: defaultOf<number>('failedJobsHistoryLimit'),
  backoffLimit: defaultOf<number>('backoffLimit'),
} as const;
