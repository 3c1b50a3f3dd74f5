/**
 * Whether Go's x509 can read a certificate's names. kube-apiserver (Go) refuses a whole chain when one
 * attribute of its issuer or subject is a string Go cannot parse (`x509: invalid RDNSequence: invalid
 * attribute value: invalid PrintableString`), while OpenSSL and Node read it. Release 0.2.0 wrote its
 * CA's name, `<service>-ca@<time>`, as a PrintableString, whose character set has no `@`: a Secret kept
 * from 0.2.0 holds a CA no kube-apiserver can call the webhook with (issue 41). The rules are those of
 * Go's `crypto/x509` (parser.go, `parseASN1String`); the DER is walked here, since node-forge decodes
 * some string types (BMPString) before they can be checked.
 */
/** One DER element: its identifier octet's parts and where its contents are. */
interface Element {
  readonly tagClass: number;
  readonly constructed: boolean;
  readonly tag: number;
  readonly start: number;
  readonly end: number;
}

/** The element at `at` of `der` (low tag numbers only: every tag of a Name is below 31). */
function element(der: Buffer, at: number): Element {
  const identifier = der[at];
  let length = der[at + 1];
  if (identifier === undefined || length === undefined || (identifier & 0x1f) === 0x1f) throw new RangeError(`unsupported DER at byte ${at}`);
  let start = at + 2;
  if (length & 0x80) {
    const octets = length & 0x7f;
    if (octets === 0 || octets > 4) throw new RangeError(`unsupported DER length at byte ${at}`);
    length = der.readUIntBE(start, octets);
    start += octets;
  }
  if (start + length > der.length) throw new RangeError(`DER element at byte ${at} runs past the end`);
  return { tagClass: identifier >> 6, constructed: (identifier & 0x20) !== 0, tag: identifier & 0x1f, start, end: start + length };
}

/** The elements inside a constructed one. */
function children(der: Buffer, parent: Element): Element[] {
  const out: Element[] = [];
  for (let at = parent.start; at < parent.end; at = out[out.length - 1]!.end) out.push(element(der, at));
  return out;
}

/** ASN.1 universal tags of the string types Go's x509 reads in a name, and what it accepts in each. */
const STRING_RULES: ReadonlyMap<number, { readonly type: string; readonly accepts: (bytes: Buffer) => boolean }> = new Map([
  [12, { type: 'UTF8String', accepts: (bytes: Buffer) => isUtf8(bytes) }],
  // PrintableString's set, plus '*' and '&', which Go lets through because real certificates carry them.
  [19, { type: 'PrintableString', accepts: (bytes: Buffer) => /^[A-Za-z0-9 '()+,\-./:=?*&]*$/.test(bytes.toString('latin1')) }],
  [22, { type: 'IA5String', accepts: (bytes: Buffer) => bytes.every((b) => b < 0x80) }],
  [18, { type: 'NumericString', accepts: (bytes: Buffer) => /^[0-9 ]*$/.test(bytes.toString('latin1')) }],
  [30, { type: 'BMPString', accepts: (bytes: Buffer) => bytes.length % 2 === 0 }],
  [20, { type: 'T61String', accepts: () => true }],
]);

function isUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Names of the attribute types a name usually holds, for messages. */
const ATTRIBUTES: Readonly<Record<string, string>> = { '55 04 03': 'commonName', '55 04 0a': 'organizationName', '55 04 0b': 'organizationalUnitName', '55 04 06': 'countryName' };

/** What is wrong with one Name (a sequence of sets of type-and-value pairs), or undefined. */
function nameProblem(der: Buffer, name: Element, field: string): string | undefined {
  for (const set of children(der, name)) {
    for (const pair of children(der, set)) {
      const [type, value] = children(der, pair);
      if (!type || !value) return `its ${field} has an attribute without a value`;
      const oid = der.subarray(type.start, type.end).toString('hex').replace(/(..)(?!$)/g, '$1 ');
      const attribute = ATTRIBUTES[oid] ?? `attribute ${oid}`;
      const rule = value.tagClass === 0 && !value.constructed ? STRING_RULES.get(value.tag) : undefined;
      if (!rule) return `its ${field}'s ${attribute} is of ASN.1 type ${value.tag}, not a string type Go's x509 reads`;
      const bytes = der.subarray(value.start, value.end);
      if (!rule.accepts(bytes)) return `its ${field}'s ${attribute} is ${/^I/.test(rule.type) ? 'an' : 'a'} ${rule.type} holding ${JSON.stringify(bytes.toString('latin1'))}, which Go's x509 (kube-apiserver) refuses`;
    }
  }
  return undefined;
}

/**
 * Why Go's x509 would refuse the issuer or subject of `certPem`, or undefined when it reads both.
 * Only the names are checked: a PEM that is not a certificate at all is `readCertificate`'s to report.
 */
export function goX509NameProblem(certPem: string): string | undefined {
  const base64 = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(certPem)?.[1];
  if (base64 === undefined) return undefined;
  const der = Buffer.from(base64, 'base64');
  let tbs: Element[];
  try {
    tbs = children(der, children(der, element(der, 0))[0]!);
  } catch {
    return undefined;
  }
  // TBSCertificate: [0] version (absent in a v1 certificate), serial, signature algorithm, issuer, validity, subject, …
  const at = tbs[0]?.tagClass === 2 ? 1 : 0;
  const [issuer, subject] = [tbs[at + 2], tbs[at + 4]];
  if (!issuer || !subject) return undefined;
  try {
    return nameProblem(der, issuer, 'issuer') ?? nameProblem(der, subject, 'subject');
  } catch (err) {
    return `its names are not valid DER (${(err as Error).message})`;
  }
}
