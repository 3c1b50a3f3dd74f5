/** The value below which a fraction `q` of `xs` lies (nearest rank); NaN for none. */
export const quantile = (xs: readonly number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;

/** The middle value (the upper one of an even count). */
export const median = (xs: readonly number[]): number => quantile(xs, 0.5);
