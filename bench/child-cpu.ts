/**
 * CPU time of this process' waited-for child processes (Linux: cutime + cstime of /proc/self/stat),
 * which other processes on a shared machine disturb less than wall time. NaN elsewhere.
 */
import { existsSync, readFileSync } from 'node:fs';

/** CPU milliseconds used so far by the children this process has waited for (10 ms resolution). */
export function childrenCpuMs(): number {
  if (!existsSync('/proc/self/stat')) return NaN;
  // Fields after the parenthesised command name; cutime and cstime are fields 16 and 17 (clock ticks, 100/s).
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[13]) + Number(fields[14])) * 10;
}
