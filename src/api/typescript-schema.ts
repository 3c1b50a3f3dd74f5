/**
 * The schema as json-schema-to-typescript should see it, so the generated types (imports/, and through
 * them the npm package's `.d.ts`) read well in an editor:
 * - every property's JSDoc carries its bounds (`@minimum 1`, `@maximum 1000`, `@maxLength 253`) and its
 *   `@default`, which the generator does not print itself (it prints `@minItems`/`@maxItems` only);
 * - a property whose type is a named interface (`source: BackupSource`, `retention: Retention`) has its
 *   own JSDoc too: the generator puts a titled node's description on the interface alone, so hovering
 *   the field showed nothing (the node is wrapped in a one-member `allOf`, which keeps both);
 * - a titled node used twice (`requests` and `limits` are both a `ResourceList`) is one interface, not
 *   `ResourceList` and `ResourceList1`: the second use refers to the first by name;
 * - a list under `spec` of strings or numbers is a `readonly` array, so what users write (a
 *   `readonly string[]`, an `as const` list) is accepted; its length bounds are JSDoc and checked by the
 *   validator, not a tuple union (`[string] | [string, string] | …`), which no `string[]` satisfies.
 */
import { isDeepStrictEqual } from 'node:util';

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Bound keywords as JSDoc tags, in the order printed. */
const BOUND_TAGS = ['minimum', 'exclusiveMinimum', 'maximum', 'exclusiveMaximum', 'minLength', 'maxLength'] as const;

/** The TypeScript of a JSON Schema primitive type that a readonly list may hold. */
const PRIMITIVE_TYPES: Readonly<Record<string, string>> = { string: 'string', integer: 'number', number: 'number', boolean: 'boolean' };

/** `@minimum 1`, `@maximum 1000`, `@default 7`: what a property's JSDoc should add to its description. */
function docTags(node: Node): string[] {
  const tags = BOUND_TAGS.filter((keyword) => node[keyword] !== undefined).map((keyword) => `@${keyword} ${String(node[keyword])}`);
  if (node['default'] !== undefined) tags.push(`@default ${JSON.stringify(node['default'])}`);
  return tags;
}

/** Description, more paragraphs and the tags as one JSDoc text (tags last: TSDoc reads on to the next tag). */
const describe = (node: Node, paragraphs: readonly string[] = [], tags: readonly string[] = []): string =>
  [typeof node['description'] === 'string' ? node['description'] : '', ...paragraphs, [...tags, ...docTags(node)].join('\n')].filter((part) => part !== '').join('\n\n');

/**
 * A `readonly T[]` node for a list of primitives: `tsType` replaces the generated type, so the items'
 * description and the length bounds move into the property's JSDoc.
 */
function readonlyList(node: Node): Node | undefined {
  const items = node['items'];
  if (node['type'] !== 'array' || !isNode(items) || node['tsType'] !== undefined) return undefined;
  const element = PRIMITIVE_TYPES[String(items['type'])];
  if (element === undefined || items['enum'] !== undefined) return undefined;
  const lengths = (['minItems', 'maxItems'] as const).filter((k) => node[k] !== undefined).map((k) => `@${k} ${String(node[k])}`);
  const itemBounds = docTags(items).map((tag) => tag.slice(1)).join(', ');
  const itemDoc = [typeof items['description'] === 'string' ? items['description'] : '', itemBounds === '' ? '' : `(${itemBounds})`].filter((p) => p !== '').join(' ');
  return { tsType: `readonly ${element}[]`, description: describe(node, itemDoc === '' ? [] : [`Items: ${itemDoc}`], lengths) };
}

/** The schema, transformed as the module comment says; `schema` is not modified. */
export function forTypeScript(schema: Node): Node {
  // Titles seen so far, with the node that first declared each.
  const declared = new Map<string, Node>();

  const visit = (node: Node, inSpec: boolean): Node => {
    const out: Node = {};
    for (const [key, child] of Object.entries(node)) {
      if (key === 'default' || key === 'enum') out[key] = structuredClone(child);
      else if (key === 'properties' && isNode(child)) {
        // What users write is the root's `spec`: its lists are readonly.
        const spec = (name: string): boolean => inSpec || (node === schema && name === 'spec');
        out[key] = Object.fromEntries(Object.entries(child).map(([name, value]) => [name, isNode(value) ? property(value, spec(name)) : value]));
      } else if (isNode(child)) out[key] = visit(child, inSpec);
      else if (Array.isArray(child)) out[key] = child.map((c: unknown) => (isNode(c) ? visit(c, inSpec) : structuredClone(c)));
      else out[key] = child;
    }
    return out;
  };

  const property = (node: Node, inSpec: boolean): Node => {
    const title = node['title'];
    if (typeof title !== 'string') {
      const list = inSpec ? readonlyList(node) : undefined;
      return list ?? { ...visit(node, inSpec), description: describe(node) };
    }
    const first = declared.get(title);
    if (first !== undefined) {
      if (!isDeepStrictEqual(first, node)) throw new Error(`two different schema nodes are titled ${title}: give one another title`);
      return { tsType: title, description: describe(node) };
    }
    declared.set(title, node);
    // The interface keeps the node's own description; the property gets it again with its default.
    const { default: _default, ...type } = node;
    return { allOf: [visit(type, inSpec)], description: describe(node) };
  };

  return visit(schema, false);
}
