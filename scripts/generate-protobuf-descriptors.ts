/**
 * Writes test/apiserver/protobuf/descriptors.ts: the protobuf field numbers, JSON names and Go
 * pointer/omitempty facts of every struct reachable from the kinds whose protobuf bodies the test API
 * server decodes (apps/v1 Deployment, batch/v1 Job and CronJob), read from the `protobuf:"…"` and
 * `json:"…"` struct tags of k8s.io/api and k8s.io/apimachinery.
 *
 *   npm exec -- tsx scripts/generate-protobuf-descriptors.ts --api <k8s.io/api checkout> \
 *     --apimachinery <k8s.io/apimachinery checkout> --source '<the two commits>'
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { api: { type: 'string' }, apimachinery: { type: 'string' }, source: { type: 'string', default: 'unrecorded commits' }, out: { type: 'string', default: 'test/apiserver/protobuf/descriptors.ts' } } });
if (!values.api || !values.apimachinery) {
  console.error('--api and --apimachinery must name checkouts of k8s.io/api and k8s.io/apimachinery');
  process.exit(2);
}

/** Go packages read, by the alias the others import them with. */
const PACKAGES: Record<string, string> = {
  v1: join(values.api, 'core/v1/types.go'),
  apps: join(values.api, 'apps/v1/types.go'),
  batch: join(values.api, 'batch/v1/types.go'),
  metav1: join(values.apimachinery, 'pkg/apis/meta/v1/types.go'),
};
const ROOTS = ['apps.Deployment', 'batch.Job', 'batch.CronJob'];
/** Types with their own wire format, decoded by hand. */
const SPECIAL: Record<string, string> = { 'metav1.Time': 'time', 'metav1.MicroTime': 'time', 'resource.Quantity': 'quantity', 'intstr.IntOrString': 'intOrString', 'metav1.Duration': 'duration' };
/** Fields read past (kind `skip`): status is reset on create, managedFields are the server's. */
const SKIP = new Set(['metav1.ObjectMeta.managedFields', 'apps.Deployment.status', 'batch.Job.status', 'batch.CronJob.status']);

interface GoField { json: string; goType: string; number: number; omitempty: boolean; inline: boolean }
const structs = new Map<string, GoField[]>();
const named = new Map<string, string>();
/** Import path → the package key used here. */
const IMPORTS: Record<string, string> = {
  'k8s.io/api/core/v1': 'v1',
  'k8s.io/apimachinery/pkg/apis/meta/v1': 'metav1',
  'k8s.io/apimachinery/pkg/api/resource': 'resource',
  'k8s.io/apimachinery/pkg/util/intstr': 'intstr',
  'k8s.io/apimachinery/pkg/types': 'types',
};
/** Per package, the alias a file imports another package with → the package key. */
const aliases = new Map<string, Map<string, string>>();

for (const [alias, file] of Object.entries(PACKAGES)) {
  const src = readFileSync(file, 'utf8');
  const own = new Map<string, string>();
  for (const m of src.matchAll(/^\t(?:(\w+) )?"([^"]+)"$/gm)) {
    const key = IMPORTS[m[2] ?? ''];
    if (key) own.set(m[1] ?? (m[2] ?? '').split('/').pop() ?? '', key);
  }
  aliases.set(alias, own);
  for (const m of src.matchAll(/^type (\w+) (\S[^\n{]*)$/gm)) named.set(`${alias}.${m[1]}`, (m[2] ?? '').trim());
  for (const m of src.matchAll(/^type (\w+) struct \{\n([\s\S]*?)^\}/gm)) {
    const fields: GoField[] = [];
    for (const line of (m[2] ?? '').split('\n')) {
      const f = /^\t(?:(\w+)\s+)?(\S+)\s+`([^`]*protobuf:"([^"]+)"[^`]*)`/.exec(line);
      if (!f) continue;
      const tags = f[3] ?? '';
      const json = /json:"([^"]*)"/.exec(tags)?.[1] ?? '';
      const number = (f[4] ?? '').split(',')[1] ?? '0';
      const jsonName = json.split(',')[0] ?? '';
      fields.push({ json: jsonName, goType: f[2] ?? '', number: Number(number), omitempty: json.includes('omitempty'), inline: jsonName === '' || json.includes('inline') });
    }
    structs.set(`${alias}.${m[1]}`, fields);
  }
}

/** Resolves a Go type used in package `pkg` to a qualified name. */
function qualify(pkg: string, goType: string): string {
  const bare = goType.replace(/^\*/, '').replace(/^\[\]/, '');
  const dot = bare.indexOf('.');
  if (dot < 0) return `${pkg}.${bare}`;
  const alias = bare.slice(0, dot);
  return `${aliases.get(pkg)?.get(alias) ?? alias}${bare.slice(dot)}`;
}

type Descriptor = Record<number, [json: string, kind: string, keep: 0 | 1]>;
const out: Record<string, Descriptor> = {};
const queue = [...ROOTS];
while (queue.length > 0) {
  const name = queue.shift() as string;
  if (out[name] || SPECIAL[name]) continue;
  const fields = structs.get(name);
  if (!fields) throw new Error(`struct ${name} not found`);
  const pkg = name.split('.')[0] as string;
  const desc: Descriptor = {};
  for (const f of fields) {
    if (SKIP.has(`${name}.${f.json}`)) {
      desc[f.number] = [f.json, 'skip', 0];
      continue;
    }
    const pointer = f.goType.startsWith('*');
    let kind: string;
    const map = /^map\[(\w+)\]([\w.]+)$/.exec(f.goType);
    const bare = f.goType.replace(/^\*/, '').replace(/^\[\]/, '');
    const resolved = named.get(qualify(pkg, bare));
    if (f.goType === '[]byte') kind = 'bytes';
    else if (map || resolved?.startsWith('map[')) {
      const value = (map?.[2] ?? /\](\S+)$/.exec(resolved ?? '')?.[1] ?? 'string').replace(/^\w+\./, (p) => (p === 'resource.' ? 'resource.' : ''));
      kind = value.endsWith('Quantity') ? 'map:quantity' : 'map:string';
    } else if (SPECIAL[qualify(pkg, bare)]) kind = SPECIAL[qualify(pkg, bare)] as string;
    // Scalars by their Go type: a few tags say `bytes` on an int32 (GRPCAction.port, SecretProjection.defaultMode).
    else if ((resolved ?? bare) === 'bool') kind = 'bool';
    else if (/^u?int(8|16|32|64)?$/.test(resolved ?? bare)) kind = 'int';
    else if (structs.has(qualify(pkg, bare))) {
      kind = `${f.inline ? 'inline' : 'message'}:${qualify(pkg, bare)}`;
      queue.push(qualify(pkg, bare));
    } else if (bare === 'string' || resolved === 'string' || qualify(pkg, bare) === 'types.UID') kind = 'string';
    else kind = 'unsupported'; // e.g. a type of a package not read here: the decoder refuses it (415).
    const keep: 0 | 1 = pointer || !f.omitempty ? 1 : 0;
    // Repeated by the Go type: some k8s.io/api tags say `opt` on a slice (tolerations, claims).
    const repeated = f.goType.startsWith('[]') && f.goType !== '[]byte';
    desc[f.number] = [f.json, `${repeated ? '[]' : ''}${kind}`, keep];
  }
  out[name] = desc;
}

const header = `/**
 * GENERATED by scripts/generate-protobuf-descriptors.ts from the struct tags of k8s.io/api and
 * k8s.io/apimachinery (${values.source}): do not edit.
 * Per struct, protobuf field number → [JSON name, kind, keep], where
 * kind is string | int | bool | bytes | time | quantity | intOrString | duration | map:string |
 * map:quantity | message:<struct> | inline:<struct> (embedded, JSON-inlined) | unsupported | skip
 * (read past: status, managedFields), prefixed with [] when
 * repeated, and keep is 1 when a zero value is written in JSON (a pointer, or no omitempty).
 */
`;
const lines = Object.entries(out).map(([name, desc]) => `  ${JSON.stringify(name)}: ${JSON.stringify(desc)},`);
const body = `export const DESCRIPTORS: Readonly<Record<string, Readonly<Record<number, readonly [string, string, 0 | 1]>>>> = {\n${lines.join('\n')}\n};\n`;
writeFileSync(values.out, header + body);
console.log(`wrote ${Object.keys(out).length} structs to ${values.out}`);
