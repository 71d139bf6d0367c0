/** The path of a Bun binary, or undefined when none can be found. */
export function findBun(env?: Record<string, string | undefined>): string | undefined;
/** The one line printed when Bun cannot be found. */
export const BUN_MISSING: string;
/** Bun's own options for every process that runs Marquee (the HTTP parser's head limit). */
export const BUN_SERVE_ARGS: readonly string[];
