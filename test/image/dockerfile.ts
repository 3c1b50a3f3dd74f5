/**
 * Just enough of the Dockerfile syntax to check ours: instructions with their continuation lines
 * joined, comments dropped, split into stages at each FROM; the JSON (exec) form of ENTRYPOINT and
 * `key=value` pairs of ENV and LABEL (double quotes allowed).
 */
import { readFileSync } from 'node:fs';

/** One instruction: its keyword (upper case) and the rest of the line. */
export interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** Instructions of the Dockerfile at `path`, stage by stage (the FROM line first in each). */
export function dockerfileStages(path: string): Instruction[][] {
  const joined = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ');
  const stages: Instruction[][] = [];
  for (const line of joined.split('\n')) {
    const match = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!match) continue;
    const instruction = { keyword: match[1]!.toUpperCase(), args: match[2]!.trim().replace(/\s+/g, ' ') };
    if (instruction.keyword === 'FROM') stages.push([]);
    stages.at(-1)?.push(instruction);
  }
  return stages;
}

/** `a=b c="d e"` → { a: 'b', c: 'd e' }. */
export function keyValues(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const match of args.matchAll(/([\w.-]+)=("(?:[^"\\]|\\.)*"|\S*)/g)) out[match[1]!] = match[2]!.startsWith('"') ? (JSON.parse(match[2]!) as string) : match[2]!;
  return out;
}

/** The args of the only instruction `keyword` of `stage`. */
export function only(stage: readonly Instruction[], keyword: string): string {
  const found = stage.filter((i) => i.keyword === keyword);
  if (found.length !== 1) throw new Error(`expected one ${keyword} in the stage, found ${found.length}`);
  return found[0]!.args;
}
