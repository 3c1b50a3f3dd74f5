/**
 * The JSONPath subset CRD `additionalPrinterColumns` use (client-go `util/jsonpath` syntax without
 * the `{}` template): `.a.b`, `.a[0]`, `.a[*].b`, `.a['k.x']`, `.a[?(@.type=="Ready")].status`.
 */

type Step =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'all' }
  | { readonly kind: 'filter'; readonly path: string[]; readonly op: string; readonly value: string | number | boolean | undefined };

/** A JSONPath that failed to parse. */
export class JsonPathError extends Error {
  override readonly name = 'JsonPathError';
}

function parseLiteral(raw: string): string | number | boolean {
  const t = raw.trim();
  if (/^".*"$/.test(t) || /^'.*'$/.test(t)) return t.slice(1, -1);
  if (t === 'true' || t === 'false') return t === 'true';
  const n = Number(t);
  if (!Number.isNaN(n)) return n;
  return t;
}

/** Compiles a path such as `.status.conditions[?(@.type=="Ready")].status`. */
export function parseJsonPath(path: string): Step[] {
  let p = path.trim();
  if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1);
  if (p.startsWith('$')) p = p.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < p.length) {
    const ch = p[i];
    if (ch === '.') {
      i++;
      let name = '';
      while (i < p.length && p[i] !== '.' && p[i] !== '[') name += p[i++];
      if (name === '*') steps.push({ kind: 'all' });
      else if (name !== '') steps.push({ kind: 'field', name });
    } else if (ch === '[') {
      const end = p.indexOf(']', p[i + 1] === '?' ? p.indexOf(')', i) : i);
      if (end < 0) throw new JsonPathError(`unterminated array notation in ${path}`);
      const inner = p.slice(i + 1, end).trim();
      i = end + 1;
      if (inner === '*') steps.push({ kind: 'all' });
      else if (/^-?\d+$/.test(inner)) steps.push({ kind: 'index', index: Number(inner) });
      else if (/^'.*'$|^".*"$/.test(inner)) steps.push({ kind: 'field', name: inner.slice(1, -1) });
      else if (inner.startsWith('?(') && inner.endsWith(')')) {
        const expr = inner.slice(2, -1).trim();
        const m = /^@((?:\.[A-Za-z0-9_-]+)+)\s*(==|!=|<=|>=|<|>)\s*(.+)$/.exec(expr);
        if (m) steps.push({ kind: 'filter', path: (m[1] as string).slice(1).split('.'), op: m[2] as string, value: parseLiteral(m[3] as string) });
        else {
          const exists = /^@((?:\.[A-Za-z0-9_-]+)+)$/.exec(expr);
          if (!exists) throw new JsonPathError(`unsupported filter ${expr}`);
          steps.push({ kind: 'filter', path: (exists[1] as string).slice(1).split('.'), op: 'exists', value: undefined });
        }
      } else throw new JsonPathError(`unsupported array notation [${inner}]`);
    } else {
      throw new JsonPathError(`unrecognized character in action: ${ch ?? ''}`);
    }
  }
  return steps;
}

function get(v: unknown, path: readonly string[]): unknown {
  let cur = v;
  for (const part of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function compare(a: unknown, op: string, b: unknown): boolean {
  switch (op) {
    case 'exists': return a !== undefined;
    case '==': return a === b;
    case '!=': return a !== b;
    case '<': return typeof a === 'number' && typeof b === 'number' && a < b;
    case '>': return typeof a === 'number' && typeof b === 'number' && a > b;
    case '<=': return typeof a === 'number' && typeof b === 'number' && a <= b;
    case '>=': return typeof a === 'number' && typeof b === 'number' && a >= b;
    default: return false;
  }
}

/** Every value the path selects in `root` (empty when nothing matches). */
export function evaluateJsonPath(steps: readonly Step[], root: unknown): unknown[] {
  let current: unknown[] = [root];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of current) {
      if (step.kind === 'field') {
        if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
          const child = (v as Record<string, unknown>)[step.name];
          if (child !== undefined) next.push(child);
        }
      } else if (step.kind === 'index') {
        if (Array.isArray(v)) {
          const child = v[step.index < 0 ? v.length + step.index : step.index];
          if (child !== undefined) next.push(child);
        }
      } else if (step.kind === 'all') {
        if (Array.isArray(v)) next.push(...v);
        else if (v !== null && typeof v === 'object') next.push(...Object.values(v));
      } else if (Array.isArray(v)) {
        for (const item of v) if (compare(get(item, step.path), step.op, step.value)) next.push(item);
      }
    }
    current = next;
  }
  return current;
}
