/** Memory facts of a controller process for the e2e tests: the Deployment's limit from dist/, and a process's peak RSS. */
import { readFileSync } from 'node:fs';
import { isQuantity, parseQuantity } from '../../src/api/quantity.ts';
import { distDocuments } from './harness.ts';

/** The controller container's memory limit from dist/ (the Deployment), in bytes. */
export function memoryLimitBytes(): number {
  const deployment = distDocuments().find((d) => d.kind === 'Deployment') as { spec: { template: { spec: { containers: { resources?: { limits?: { memory?: string } } }[] } } } } | undefined;
  const limit = deployment?.spec.template.spec.containers[0]?.resources?.limits?.memory;
  const quantity = limit === undefined ? undefined : parseQuantity(limit);
  if (quantity === undefined || !isQuantity(quantity)) throw new Error('dist/ Deployment has no memory limit on its first container');
  return Number(quantity.mantissa) * 10 ** quantity.exponent;
}

/** The peak resident set size of a process so far, in bytes (the kernel's `VmHWM` in /proc/<pid>/status). */
export function peakRssBytes(pid: number): number {
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** `bytes` in MiB, rounded, for messages. */
export const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);
