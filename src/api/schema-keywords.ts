/**
 * A copy of a JSON Schema tree without some keywords, at any depth: how each derived schema (the CRD's,
 * the editors', the validator's) drops what its reader does not understand or need. The values of
 * `default` and `enum` are data, not schemas, and are copied as they are; the keys of `properties`
 * are field names, never dropped (a field may well be called `description`).
 */
export function withoutKeywords(node: unknown, keywords: ReadonlySet<string>): unknown {
  if (Array.isArray(node)) return node.map((child) => withoutKeywords(child, keywords));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(node)) {
    if (keywords.has(key)) continue;
    if (key === 'default' || key === 'enum') out[key] = child;
    else if (key === 'properties' && child !== null && typeof child === 'object') {
      out[key] = Object.fromEntries(Object.entries(child).map(([name, schema]) => [name, withoutKeywords(schema, keywords)]));
    } else out[key] = withoutKeywords(child, keywords);
  }
  return out;
}
