/** Field paths as Kubernetes prints them (`spec.tags[0].name`, `metadata.labels[app]`). */

/** A field path under construction; the empty string is the root. */
export type FieldPath = string;

/** `parent.child`, or `child` at the root. */
export function child(parent: FieldPath, name: string): FieldPath {
  return parent === '' ? name : `${parent}.${name}`;
}

/** `parent[index]` (list item). */
export function index(parent: FieldPath, i: number): FieldPath {
  return `${parent}[${i}]`;
}

