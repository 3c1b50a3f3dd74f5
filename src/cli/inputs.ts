/**
 * Reading manifests for the CLI: files, folders (recursively, `.yaml`/`.yml`/`.json`) and stdin (`-`),
 * each split into its YAML documents (JSON is YAML), with the line of every field kept so an error
 * can point at `file:line`. `kind: List` documents are unpacked into their items.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { Composer, isMap, isSeq, LineCounter, Parser, type Document, type Node } from 'yaml';
import { KIND, SERVED_GROUP_VERSIONS } from '../api/constants.ts';
import { validateAnyVersion, type FieldError } from '../api/validate.ts';
import { UsageError } from './io.ts';

/** One object found in the input. */
export interface Manifest {
  /** The file it came from (`<stdin>` for `-`). */
  readonly file: string;
  /** 1-based line where the object starts. */
  readonly line: number;
  /** The object as plain data. */
  readonly object: unknown;
  /** 1-based line of a dotted field path (`spec.source.etcd.endpoints[0]`), or of its nearest present parent. */
  readonly lineOf: (field: string) => number;
}

/** A document that is not YAML. */
export interface SyntaxProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** What readInputs hands each object and each syntax problem to, in input order. */
export interface InputVisitor {
  /** Called for each object; the document it came from can be collected as soon as this returns. */
  readonly manifest: (manifest: Manifest) => void;
  /** Called for each document that is not YAML. */
  readonly problem: (problem: SyntaxProblem) => void;
}

const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** The files a path stands for: itself, or every manifest file under a folder, in sorted order. */
function expand(path: string): string[] {
  if (path === '-') return [path];
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) throw new UsageError(`no such file or folder: ${path}`);
  if (!stat.isDirectory()) return [path];
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && MANIFEST_EXTENSIONS.has(extname(entry.name)))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** `spec.a[0].b` → `['spec', 'a', 0, 'b']`. */
export function fieldSegments(field: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const match of field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(match[2] === undefined ? (match[1] ?? '') : Number(match[2]));
  return out;
}

/** Offset of the key (maps) or item (lists) at the end of `path`, as deep as the document has it. */
function offsetOf(root: Node | null, path: readonly (string | number)[], fallback: number): number {
  let node: unknown = root;
  let offset = fallback;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === segment);
      if (pair === undefined) break;
      offset = (pair.key as Node).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment] as Node | undefined;
      if (item === undefined) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else {
      break;
    }
  }
  return offset;
}

function manifestsOf(file: string, doc: Document, lines: LineCounter): Manifest[] {
  const start = doc.contents?.range?.[0] ?? doc.range?.[0] ?? 0;
  const object: unknown = doc.toJS({ maxAliasCount: 100 });
  if (object === null || object === undefined) return [];
  const record = object as Record<string, unknown>;
  const line = (offset: number): number => lines.linePos(offset).line;
  if (typeof record['kind'] === 'string' && record['kind'].endsWith('List') && Array.isArray(record['items'])) {
    return record['items'].map((item, i) => {
      const base = ['items', i];
      return { file, line: line(offsetOf(doc.contents, base, start)), object: item, lineOf: (field) => line(offsetOf(doc.contents, [...base, ...fieldSegments(field)], start)) };
    });
  }
  return [{ file, line: line(start), object, lineOf: (field) => line(offsetOf(doc.contents, fieldSegments(field), start)) }];
}

/**
 * Reads every manifest of `paths` (`-` = standard input) and hands each to `visit`, one document at a
 * time: documents are parsed as a stream and dropped once visited, so 1,000 schedules in one file
 * never sit in memory as syntax trees together (that cost more in garbage collection than the parsing).
 * A path that does not exist is a UsageError. Returns the number of files read.
 */
export function readInputs(paths: readonly string[], stdin: () => string, visit: InputVisitor): number {
  const files = paths.flatMap(expand);
  for (const path of files) {
    const file = path === '-' ? '<stdin>' : path;
    const text = path === '-' ? stdin() : readFileSync(path, 'utf8');
    const lines = new LineCounter();
    const composer = new Composer({ prettyErrors: false });
    // What parseAllDocuments does, without collecting the documents into an array first.
    for (const doc of composer.compose(new Parser(lines.addNewLine).parse(text), true, text.length)) {
      if (doc.errors.length > 0) {
        for (const error of doc.errors) visit.problem({ file, line: lines.linePos(error.pos[0]).line, message: `not valid YAML: ${error.message.split('\n')[0] ?? ''}` });
        continue;
      }
      for (const manifest of manifestsOf(file, doc, lines)) visit.manifest(manifest);
    }
  }
  return files.length;
}

/**
 * Whether an object is meant as a BackupSchedule: by `kind` alone, so a wrong `apiVersion`
 * (`kubelings.dev/v2`, a misspelt group) is reported rather than skipped.
 */
export function isBackupSchedule(object: unknown): boolean {
  return typeof object === 'object' && object !== null && (object as { kind?: unknown }).kind === KIND;
}

/**
 * The problems of a BackupSchedule manifest, checked in the version its `apiVersion` names
 * (validateAnyVersion: v1alpha1 and v1 documents may sit side by side in one file), plus a missing
 * `apiVersion`, which objects read back from the API server always have but a file may lack (kubectl
 * refuses it; the rest is then checked as v1alpha1). An `apiVersion` that is not served gets only the
 * error listing the served ones: the fields of a version whose schema is unknown cannot be judged, and
 * errors from a guessed one would mislead.
 */
export function manifestProblems(object: unknown): FieldError[] {
  const apiVersion = (object as { apiVersion?: unknown }).apiVersion;
  const errors = validateAnyVersion(object);
  if (apiVersion === undefined) errors.unshift({ field: 'apiVersion', message: 'apiVersion: is required' });
  else if (!(SERVED_GROUP_VERSIONS as readonly unknown[]).includes(apiVersion)) return errors.filter((e) => e.field === 'apiVersion');
  return errors;
}
