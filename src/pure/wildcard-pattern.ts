/**
 * Allow-list patterns in which `*` is the only special character (`--allowed-backup-images`,
 * `--allowed-backup-endpoints`): everything else matches itself, so a `.` or `+` in a registry or host
 * name is never a regular expression's.
 */

/**
 * `pattern` as an anchored regular expression in which each `*` matches `star` (a regular expression
 * fragment: `.*` for any run of characters, `[^/]*` for any but `/`) and every other character itself.
 */
export function wildcardRegExp(pattern: string, star: string, flags?: string): RegExp {
  return new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join(star)}$`, flags);
}
