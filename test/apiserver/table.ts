import type { KubeObject } from '../../src/kube/object.ts';
import { BUILTIN_PRINTERS, DEFAULT_PRINTER, NAME_DESCRIPTION, type ColumnDefinition } from './builtin-printers.ts';
import { ageOf } from './human-duration.ts';
import { evaluateJsonPath, parseJsonPath } from './jsonpath.ts';
import { groupResourceKey, type PrinterColumn, type ResourceType } from './resource-type.ts';

/** `includeObject` of a Table request. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** The metadata-only form of an object (`meta.k8s.io/v1` PartialObjectMetadata). */
export function partialObjectMetadata(obj: KubeObject): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

function customCell(column: PrinterColumn, obj: KubeObject, nowMs: number): unknown {
  let results: unknown[];
  try {
    results = evaluateJsonPath(parseJsonPath(column.jsonPath), obj);
  } catch {
    return null;
  }
  if (results.length === 0) return null;
  const value = results[0];
  switch (column.type) {
    case 'string':
      return typeof value === 'string' ? value : JSON.stringify(value);
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      return typeof value === 'string' ? ageOf(value, nowMs) : null;
    default:
      return null;
  }
}

function customPrinter(type: ResourceType): { columns: ColumnDefinition[]; row: (o: KubeObject, now: number) => unknown[] } {
  const printerColumns = type.custom?.printerColumns ?? [];
  // A CRD without printer columns shows Name and Age (apiextensions `tableconvertor`).
  const cols: PrinterColumn[] = printerColumns.length > 0 ? [...printerColumns] : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
  return {
    columns: [
      { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
      ...cols.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description ?? `Custom resource definition column (in JSONPath format): ${c.jsonPath}`, priority: c.priority ?? 0 })),
    ],
    row: (o, now) => [o.metadata.name, ...cols.map((c) => customCell(c, o, now))],
  };
}

/** Builds the `meta.k8s.io/v1` Table kubectl asks for with `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`. */
export function toTable(type: ResourceType, objects: readonly KubeObject[], listMeta: Record<string, unknown>, include: IncludeObject, nowMs: number, withColumns = true): Record<string, unknown> {
  const printer = type.custom ? customPrinter(type) : (BUILTIN_PRINTERS[groupResourceKey(type.group, type.resource)] ?? DEFAULT_PRINTER);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    ...(withColumns ? { columnDefinitions: printer.columns } : {}),
    rows: objects.map((o) => ({
      cells: printer.row(o, nowMs),
      object: include === 'None' ? null : include === 'Object' ? o : partialObjectMetadata(o),
    })),
  };
}
