/** Go's two ways of quoting text in error messages, for error texts identical to kube-apiserver's. */

/**
 * The time package's `quote`: double quotes, `"` and backslash escaped, and every byte of a non-ASCII
 * or control character written as `\xNN` (its UTF-8 bytes), unlike JSON.stringify.
 */
export function goQuote(text: string): string {
  let out = '"';
  for (const char of text) {
    if (char < ' ' || char >= '\u0080') {
      for (const byte of new TextEncoder().encode(char)) out += `\\x${byte.toString(16).padStart(2, '0')}`;
    } else {
      out += char === '"' || char === '\\' ? `\\${char}` : char;
    }
  }
  return `${out}"`;
}

const GO_ESCAPES: Readonly<Record<string, string>> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };
/** Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const GO_PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/**
 * Go's `strconv.Quote`, which strconv's errors use (`strconv.Atoi: parsing "x": invalid syntax`):
 * printable runes as they are, `"` and backslash escaped, the C escapes, `\xNN` below space and for
 * DEL, `\uNNNN`/`\UNNNNNNNN` for other unprintable runes (U+200B, U+FEFF…), unlike JSON.stringify.
 */
export function goStrconvQuote(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (char === '"' || char === '\\') out += `\\${char}`;
    else if (GO_PRINTABLE.test(char)) out += char;
    else if (GO_ESCAPES[char] !== undefined) out += GO_ESCAPES[char];
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code >= 0xd800 && code <= 0xdfff) out += '\ufffd'; // Go decodes a lone surrogate as U+FFFD, printable
    else if (code < 0x10000) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += `\\U${code.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}
