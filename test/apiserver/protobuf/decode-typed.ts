/**
 * Protobuf → JSON for the kinds described in `descriptors.ts` (generated from the k8s.io/api struct
 * tags): Deployment, Job and CronJob as `kubectl create deployment|job|cronjob` (and `create job
 * --from=cronjob/…`, which copies a whole defaulted pod template) send them, and ObjectMeta. Zero
 * values of non-pointer `omitempty` fields are left out, as Go's JSON encoding leaves them out.
 */
import { DESCRIPTORS } from './descriptors.ts';
import { fields, type Fields } from './wire.ts';

/** `apiVersion/kind` → the descriptor of its top-level struct. */
export const TYPED_KINDS: Readonly<Record<string, string>> = {
  'apps/v1/Deployment': 'apps.Deployment',
  'batch/v1/Job': 'batch.Job',
  'batch/v1/CronJob': 'batch.CronJob',
};

function message(v: Buffer | number | undefined): Fields {
  if (!Buffer.isBuffer(v)) throw new Error('expected a length-delimited message');
  return fields(v);
}

function text(v: Buffer | number | undefined): string {
  if (!Buffer.isBuffer(v)) throw new Error('expected a string');
  return v.toString('utf8');
}

/** `metav1.Time`: seconds and nanos; the zero time is JSON null, which the server ignores. */
function time(f: Fields): string | undefined {
  const seconds = Number(f.get(1)?.[0] ?? 0);
  if (seconds === 0) return undefined;
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

function scalar(kind: string, v: Buffer | number | undefined): unknown {
  switch (kind) {
    case 'string': return text(v);
    case 'int': return Number(v);
    case 'bool': return v !== 0;
    case 'bytes': return Buffer.isBuffer(v) ? v.toString('base64') : '';
    case 'time': return time(message(v));
    case 'quantity': return text(message(v).get(1)?.[0]);
    case 'intOrString': {
      const f = message(v);
      return Number(f.get(1)?.[0] ?? 0) === 1 ? text(f.get(3)?.[0]) : Number(f.get(2)?.[0] ?? 0);
    }
    default: throw new Error(`fields of kind ${kind} are not supported`);
  }
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false || v === undefined;
}

/** Decodes one message of struct `name`; throws on a field number the descriptor does not know. */
export function decodeTyped(name: string, f: Fields): Record<string, unknown> {
  const descriptor = DESCRIPTORS[name];
  if (!descriptor) throw new Error(`no descriptor for ${name}`);
  const out: Record<string, unknown> = {};
  for (const [number, values] of f) {
    const field = descriptor[number];
    if (!field) throw new Error(`unknown field ${number} of ${name}`);
    const [json, rawKind, keep] = field;
    if (rawKind === 'skip') continue;
    const repeated = rawKind.startsWith('[]');
    const kind = repeated ? rawKind.slice(2) : rawKind;
    const decode = (v: Buffer | number): unknown => {
      if (kind.startsWith('message:') || kind.startsWith('inline:')) return decodeTyped(kind.slice(kind.indexOf(':') + 1), message(v));
      if (kind.startsWith('map:')) {
        const entry = message(v);
        return [text(entry.get(1)?.[0]), kind === 'map:quantity' ? scalar('quantity', entry.get(2)?.[0]) : text(entry.get(2)?.[0] ?? Buffer.alloc(0))];
      }
      return scalar(kind, v);
    };
    if (kind.startsWith('map:')) {
      out[json] = Object.fromEntries(values.map((v) => decode(v) as [string, unknown]));
    } else if (repeated) {
      out[json] = values.map(decode);
    } else if (kind.startsWith('inline:')) {
      Object.assign(out, decode(values[values.length - 1] as Buffer));
    } else {
      const value = decode(values[values.length - 1] as Buffer | number);
      if (value === undefined || (keep === 0 && isZero(value))) continue;
      out[json] = value;
    }
  }
  return out;
}

/** Decodes the `raw` of a runtime.Unknown whose type is one of {@link TYPED_KINDS}. */
export function decodeTypedKind(apiVersion: string, kind: string, raw: Buffer): Record<string, unknown> | undefined {
  const name = TYPED_KINDS[`${apiVersion}/${kind}`];
  return name ? { apiVersion, kind, ...decodeTyped(name, fields(raw)) } : undefined;
}
