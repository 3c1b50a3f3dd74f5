/**
 * Reading manifests for the CLI: files, folders (recursively, `.yaml`/`.yml`/`.json`, see
 * expand-paths.ts) and stdin (`-`), each read with a size bound and as UTF-8 text (read-text.ts), split
 * into its YAML documents (JSON is YAML) read as kubectl reads them (kubectl-yaml.ts), with the line of
 * every field kept so an error can point at `file:line`. `kind: List` documents are unpacked into their items.
 * What one input may make the parser build is bounded (yaml-bounds.ts): documents, depth and nodes.
 */
import { Composer, isMap, isSeq, LineCounter, type Document, type Node } from 'yaml';
import { expandPaths, type SkippedPath } from './expand-paths.ts';
import { duplicateKeyOffset, KUBECTL_PARSE_OPTIONS, KUBECTL_TO_JS_OPTIONS, MAX_ALIAS_COUNT } from './kubectl-yaml.ts';
import { decodeYamlText, readBoundedBytes, type BytesOrProblem } from './read-text.ts';
import { parseWithinBounds, tooManyDocuments, YamlBoundError } from './yaml-bounds.ts';

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

/** A file or document that is not a YAML manifest (not text, too large, not YAML, not a mapping). */
export interface SyntaxProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** What readInputs hands each object and each syntax problem to, in input order. */
export interface InputVisitor {
  /** Called for each object; the document it came from can be collected as soon as this returns. */
  readonly manifest: (manifest: Manifest) => void;
  /** Called for each file or document that is not a YAML manifest. */
  readonly problem: (problem: SyntaxProblem) => void;
  /** Called for each path under a folder that is not read (a symbolic link to a folder), before any file is read. */
  readonly skipped: (skipped: SkippedPath) => void;
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

/** What a document's top-level value is, in kubectl's words for what it cannot decode into an object. */
const describe = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'a list' : `a ${typeof value}`);

function manifestsOf(file: string, doc: Document, lines: LineCounter): Manifest[] | SyntaxProblem {
  const start = doc.contents?.range?.[0] ?? doc.range?.[0] ?? 0;
  const line = (offset: number): number => lines.linePos(offset).line;
  let object: unknown;
  try {
    object = doc.toJS(KUBECTL_TO_JS_OPTIONS);
  } catch (error) {
    // The yaml package's guard against alias expansion ("billion laughs"), and any other failure to build the value.
    const reason = error instanceof ReferenceError && /alias/i.test(error.message) ? `more than ${MAX_ALIAS_COUNT} aliases expanded (a "billion laughs" document?)` : (error as Error).message;
    return { file, line: line(start), message: `not valid YAML: ${reason}` };
  }
  if (object === null || object === undefined) return [];
  // kubectl decodes every document into an object; anything else (binary read as one long string, a bare list) fails there.
  if (typeof object !== 'object' || Array.isArray(object)) return { file, line: line(start), message: `not a Kubernetes object: a document must be a mapping with apiVersion and kind, got ${describe(object)}` };
  const record = object as Record<string, unknown>;
  if (typeof record['kind'] === 'string' && record['kind'].endsWith('List') && Array.isArray(record['items'])) {
    return record['items'].map((item, i) => {
      const base = ['items', i];
      return { file, line: line(offsetOf(doc.contents, base, start)), object: item, lineOf: (field) => line(offsetOf(doc.contents, [...base, ...fieldSegments(field)], start)) };
    });
  }
  return [{ file, line: line(start), object, lineOf: (field) => line(offsetOf(doc.contents, fieldSegments(field), start)) }];
}

/**
 * Reads every manifest of `paths` (`-` = standard input, read through `stdin`) and hands each to
 * `visit`, one document at a time: documents are parsed as a stream and dropped once visited, so 1,000
 * schedules in one file never sit in memory as syntax trees together (that cost more in garbage
 * collection than the parsing). A path that does not exist is a UsageError; a file that cannot be read,
 * is too large or is not text is a problem of that file. Returns the number of files read.
 */
export function readInputs(paths: readonly string[], stdin: () => BytesOrProblem, visit: InputVisitor): number {
  const { files, skipped } = expandPaths(paths);
  for (const entry of skipped) visit.skipped(entry);
  for (const path of files) {
    const file = path === '-' ? '<stdin>' : path;
    const read = path === '-' ? stdin() : readBoundedBytes(path);
    const decoded = 'bytes' in read ? decodeYamlText(read.bytes) : { problem: read.problem, line: 1 };
    if (!('text' in decoded)) {
      visit.problem({ file, line: decoded.line, message: decoded.problem });
      continue;
    }
    const { text } = decoded;
    const documents = tooManyDocuments(text);
    if (documents !== undefined) {
      visit.problem({ file, line: 1, message: documents });
      continue;
    }
    const lines = new LineCounter();
    const composer = new Composer(KUBECTL_PARSE_OPTIONS);
    let bound: YamlBoundError | undefined;
    // The syntax trees up to a bound; the documents before it are still composed and visited.
    const tokens = function* () {
      try {
        yield* parseWithinBounds(text, lines.addNewLine);
      } catch (error) {
        if (!(error instanceof YamlBoundError)) throw error;
        bound = error;
      }
    };
    // What parseAllDocuments does, without collecting the documents into an array first.
    for (const doc of composer.compose(tokens(), true, text.length)) {
      const duplicate = doc.errors.length === 0 ? duplicateKeyOffset(doc) : undefined;
      if (duplicate !== undefined) visit.problem({ file, line: lines.linePos(duplicate).line, message: 'not valid YAML: Map keys must be unique' });
      for (const error of doc.errors) visit.problem({ file, line: lines.linePos(error.pos[0]).line, message: `not valid YAML: ${error.message.split('\n')[0] ?? ''}` });
      if (doc.errors.length > 0 || duplicate !== undefined) continue;
      const found = manifestsOf(file, doc, lines);
      if (Array.isArray(found)) for (const manifest of found) visit.manifest(manifest);
      else visit.problem(found);
    }
    if (bound !== undefined) visit.problem({ file, line: lines.linePos(bound.offset).line, message: bound.message });
  }
  return files.length;
}

