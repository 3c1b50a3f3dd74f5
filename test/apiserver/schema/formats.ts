import { isIP } from 'node:net';

/**
 * The string formats apiextensions-apiserver checks (kube-openapi `strfmt.Default` restricted to the
 * formats CRDs may use). Any other format (`int32`, `int64`, `float`, `double`, custom names) is
 * accepted unchecked, as Kubernetes does.
 */
const checks: Record<string, (value: string) => boolean> = {
  bsonobjectid: (v) => /^[0-9a-fA-F]{24}$/.test(v),
  uri: (v) => URL.canParse(v),
  email: (v) => /^[^\s@]+@[^\s@]+$/.test(v),
  hostname: (v) => v.length <= 255 && /^([a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*\.?$/.test(v),
  ipv4: (v) => isIP(v) === 4,
  ipv6: (v) => isIP(v) === 6,
  cidr: (v) => {
    const [ip, bits, extra] = v.split('/');
    if (ip === undefined || bits === undefined || extra !== undefined || !/^\d+$/.test(bits)) return false;
    const family = isIP(ip);
    return family !== 0 && Number(bits) <= (family === 4 ? 32 : 128);
  },
  mac: (v) => /^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$/.test(v),
  uuid: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(v),
  uuid3: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(v),
  uuid4: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(v),
  uuid5: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(v),
  hexcolor: (v) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(v),
  rgbcolor: (v) => /^rgb\(\s*\d{1,3}\s*,\s*\d{1,3}\s*,\s*\d{1,3}\s*\)$/.test(v),
  byte: (v) => /^[A-Za-z0-9+/]*={0,2}$/.test(v) && v.length % 4 === 0,
  password: () => true,
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)),
  'date-time': isDateTime,
  datetime: isDateTime,
  duration: (v) => /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d|w))+$/.test(v.replace(/\s+/g, '')),
};

function isDateTime(v: string): boolean {
  return /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v));
}

/** Whether `value` satisfies `format`; unknown formats always pass. */
export function checkFormat(format: string, value: string): boolean {
  const check = checks[format];
  return check ? check(value) : true;
}
