/**
 * Bounds on what one input may make the YAML parser build, checked before the `yaml` package composes a
 * document (issue 41). Within the 16 MiB an input may hold, the package's cost follows what the text
 * nests and how many nodes and documents it holds, not its bytes: 400 KB of nested flow sequences took
 * 8 s and 430 MB and overflowed the stack, 4 MB of them 2.3 GB; 12 MB of `---` lines 79 s; 16 MB of
 * `[],` 78 s and then the heap (docs/cli-hardening.md). So:
 * - document markers are counted on the text before anything is parsed;
 * - depth and nodes are counted on the lexer's tokens as they come, and the parser (which only builds
 *   the concrete syntax tree the composer then turns into nodes) is stopped at the first token past a
 *   bound, before the document is composed.
 */
import { Lexer, Parser, type CST } from 'yaml';

/** What one input may hold. */
export interface YamlBounds {
  /** Document markers (`---`, `...`) in one input. */
  readonly documents: number;
  /** Collections nested in one another. */
  readonly depth: number;
  /** Nodes (scalars, aliases, collections, sequence entries) in one document, a `kind: List` of every object included. */
  readonly documentNodes: number;
  /** Nodes in one input, all documents together: what bounds the time one input takes. */
  readonly inputNodes: number;
}

/**
 * - 10,000 documents: ~6 s for as many BackupSchedules (one document each) on the shared 2-core machine.
 * - 1,000 levels: a Kubernetes object is rarely 20 deep, a CRD's schema 60; kubectl's parser (go-yaml)
 *   stops at 10,000, and the composer recurses, so the bound stays far below the stack's reach.
 * - 500,000 nodes in a document: a `kind: List` of 10,000 BackupSchedules (`kubectl get -o yaml`) has
 *   480,000 and takes 4.3 s and 470 MB; a document of the smallest nodes (`[],` repeated) ~850 MB.
 * - 1,000,000 nodes in an input: ~10 s at most.
 */
export const DEFAULT_YAML_BOUNDS: YamlBounds = { documents: 10_000, depth: 1_000, documentNodes: 500_000, inputNodes: 1_000_000 };

/** An input past a bound; `offset` is where in the text it was passed. */
export class YamlBoundError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'YamlBoundError';
  }
}

/** Lines starting with a document marker, counted up to `limit + 1` (the rest is not looked at). */
export function documentMarkers(text: string, limit: number): number {
  const marker = /^(?:---|\.\.\.)(?=[ \t\r\n]|$)/gm;
  let count = 0;
  while (count <= limit && marker.exec(text) !== null) count++;
  return count;
}

/** Why `text` holds more documents than `bounds` allow, before it is parsed; undefined when it does not. */
export function tooManyDocuments(text: string, bounds: YamlBounds = DEFAULT_YAML_BOUNDS): string | undefined {
  if (documentMarkers(text, bounds.documents) <= bounds.documents) return undefined;
  return `holds more than ${bounds.documents} YAML documents ("---" lines), the most one input may hold; split it`;
}

/** Lexer tokens that start a node: a plain or block scalar's text (after `\x1f`), a quoted scalar, an alias, a flow collection, a block sequence entry. */
const startsNode = (token: string): boolean => token === '\x1f' || token === '[' || token === '{' || token === '-' || token[0] === '"' || token[0] === "'" || token[0] === '*';
/** Parser stack entries that are collections (the others: the document at the bottom, a scalar on top). */
const COLLECTIONS: ReadonlySet<string> = new Set(['block-map', 'block-seq', 'flow-collection']);

/** Lexer tokens that start a document: an explicit `---`, or the document-mode marker of an implicit one. */
const startsDocument = (token: string): boolean => token === '---' || token === '\x02';

/**
 * The concrete syntax tree of `text`, as `new Parser(onNewLine).parse(text)` gives it, one document
 * (or directive, comment, error) at a time; throws {@link YamlBoundError} at the first token past a
 * bound on depth or nodes.
 */
export function* parseWithinBounds(text: string, onNewLine: (offset: number) => void, bounds: YamlBounds = DEFAULT_YAML_BOUNDS): Generator<CST.Token, void> {
  const parser = new Parser(onNewLine);
  onNewLine(0);
  let documentNodes = 0;
  let inputNodes = 0;
  for (const token of new Lexer().lex(text)) {
    const at = parser.offset;
    if (startsDocument(token)) documentNodes = 0;
    if (startsNode(token)) {
      if (++documentNodes > bounds.documentNodes) throw new YamlBoundError(`the document holds more than ${bounds.documentNodes} YAML nodes (scalars, collections and their entries), the most one document may hold; split it`, at);
      if (++inputNodes > bounds.inputNodes) throw new YamlBoundError(`the input holds more than ${bounds.inputNodes} YAML nodes (scalars, collections and their entries), the most one input may hold; the rest is not read; split it`, at);
    }
    yield* parser.next(token);
    // The parser's stack: the document, every collection open around this token, maybe a scalar on top.
    const { stack } = parser;
    const open = stack.length - 1 - (stack.length > 1 && !COLLECTIONS.has(stack[stack.length - 1]!.type) ? 1 : 0);
    if (open > bounds.depth) throw new YamlBoundError(`nested deeper than ${bounds.depth} levels, the most one document may nest; the rest is not read`, at);
  }
  yield* parser.end();
}
